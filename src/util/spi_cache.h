/*-------------------------------------------------------------------------
 *
 * spi_cache.h
 *	  Statements a process runs again and again, planned once.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_SPI_CACHE_H
#define FLUSSO_UTIL_SPI_CACHE_H

extern int	spi_execute_cached(const char *sql, int nargs, Oid *argtypes,
							   Datum *values, const char *nulls, bool read_only,
							   long count);
extern int	spi_execute_by_keys(const char *sql, int nkeys, int nargs,
								Oid *argtypes, Datum *values, bool read_only);

#endif							/* FLUSSO_UTIL_SPI_CACHE_H */
