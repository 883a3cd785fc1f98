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

/* keys given as arrays up to which spi_execute_generic() is worth it */
#define SPI_GENERIC_MAX_KEYS 100

extern int	spi_execute_cached(const char *sql, int nargs, Oid *argtypes,
							   Datum *values, const char *nulls, bool read_only,
							   long count);
extern int	spi_execute_generic(const char *sql, int nargs, Oid *argtypes,
								Datum *values, const char *nulls, bool read_only,
								long count);

#endif							/* FLUSSO_UTIL_SPI_CACHE_H */
