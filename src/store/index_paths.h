/*-------------------------------------------------------------------------
 *
 * index_paths.h
 *	  Plans with the tables' indexes alone (index_paths.c).  Private to
 *	  store/.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_INDEX_PATHS_H
#define FLUSSO_STORE_INDEX_PATHS_H

extern int	store_index_paths_begin(void);
extern void store_index_paths_end(int level);

#endif							/* FLUSSO_STORE_INDEX_PATHS_H */
