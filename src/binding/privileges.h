/*-------------------------------------------------------------------------
 *
 * privileges.h
 *	  Whether an index's owner may read what the index reads.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_BINDING_PRIVILEGES_H
#define FLUSSO_BINDING_PRIVILEGES_H

#include "binding/tables.h"

extern char *owner_problem(Oid owner);
extern char *table_privilege_problem(const TableUse *table, Oid owner);
extern char *privilege_problem(List *tables, Oid owner);

#endif							/* FLUSSO_BINDING_PRIVILEGES_H */
