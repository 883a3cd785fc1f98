/*-------------------------------------------------------------------------
 *
 * source.h
 *	  Which database flusso's state belongs to: its identity, recorded in
 *	  every OpenSearch index flusso creates, and whether this database is a
 *	  copy of another one (CREATE DATABASE ... TEMPLATE, a restored dump,
 *	  pg_upgrade).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SOURCE_SOURCE_H
#define FLUSSO_SOURCE_SOURCE_H

/* What flusso knows of the database it runs in. */
typedef struct SourceIdentity
{
	char	   *id;				/* NULL: none yet, or a catalog before 0.7.0 */
	char	   *system_identifier;	/* this cluster's, unsigned, in decimal */
	Oid			database_oid;
	char	   *database_name;
	char	   *copied_from;	/* what it is a copy of, in words, or NULL */
	char	   *unclaimed;		/* a copy not taken in yet: of what, in
								 * words; or NULL */
} SourceIdentity;

extern bool source_look(SourceIdentity *identity);
extern bool source_claim(SourceIdentity *identity, MemoryContext context,
						 char **copy_message);
extern char *source_meta_json(const SourceIdentity *identity);
extern char *source_describe(const char *system_identifier, const char *database_oid,
							 const char *database_name);

#endif							/* FLUSSO_SOURCE_SOURCE_H */
