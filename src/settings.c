/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The flusso.* settings: their variables, and their definitions, with
 *	  the prefix reserved so that a misspelt flusso setting is reported,
 *	  not ignored.  _PG_init (flusso.c) defines them in every process that
 *	  loads the library.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "settings.h"

char	   *flusso_publication = NULL;
int			flusso_batch_size = 1000000;
int			flusso_batch_timeout = 1000;
int			flusso_naptime = 100;
int			flusso_slot_save_interval = 1000;
int			flusso_snapshot_chunk_size = 10000;
int			flusso_max_seeds = 2;
int			flusso_work_mem = 65536;
int			flusso_max_build_delay = 10000;
int			flusso_max_transaction_duration = 2000;
int			flusso_build_timeout = 60000;
bool		flusso_capture_log = false;
bool		flusso_failover_slot = true;
int			flusso_max_databases = 64;
#ifdef FLUSSO_TEST_HOOKS
char	   *flusso_test_crash_file = NULL;
char	   *flusso_test_crash_confirmed_file = NULL;
#endif

/* A flusso.* integer setting that a reload changes. */
typedef struct IntSetting
{
	const char *name;
	const char *short_desc;
	const char *long_desc;
	int		   *variable;		/* initialised to boot above */
	int			boot;
	int			min;
	int			max;
	int			unit;			/* GUC_UNIT_*, or 0 */
} IntSetting;

static const IntSetting int_settings[] = {
	{"flusso.batch_size",
		"Changes the worker decodes before applying them.",
		"A transaction is never split; while catching up, larger batches build each document fewer times.",
		&flusso_batch_size, 1000000, 1, 10000000, 0},
	{"flusso.batch_timeout",
		"Longest time the worker decodes before applying what it has.",
		"Only a worker that is behind decodes that long: larger batches build each document fewer times.",
		&flusso_batch_timeout, 1000, 1, 60000, GUC_UNIT_MS},
	{"flusso.naptime",
		"How long the worker sleeps when it has caught up.",
		NULL,
		&flusso_naptime, 100, 1, 60000, GUC_UNIT_MS},
	{"flusso.snapshot_chunk_size",
		"Root keys a seed reads, builds and writes at a time.",
		"Each chunk is read in a transaction of its own and written with the seed's cursor.",
		&flusso_snapshot_chunk_size, 10000, 1, 1000000, 0},
	{"flusso.max_seeds",
		"How many indexes of one database the worker seeds side by side.",
		"Others that need a seed wait, in phase snapshot, for one of them to end.",
		&flusso_max_seeds, 2, 1, 64, 0},
	{"flusso.slot_save_interval",
		"Shortest time between two writes of the slot to disk.",
		"A crash redelivers at most the changes confirmed since.",
		&flusso_slot_save_interval, 1000, 0, 600000, GUC_UNIT_MS},
	{"flusso.work_mem",
		"Memory a batch of changes may use before spilling to disk.",
		NULL,
		&flusso_work_mem, 65536, 64, INT_MAX / 1024, GUC_UNIT_KB},
	{"flusso.max_build_delay",
		"Longest time a worker that is behind resolves changes before it builds their documents.",
		"Until it reaches the end of the flushed WAL or this delay, a worker that is behind builds each document its changes touch once.",
		&flusso_max_build_delay, 10000, 0, 3600000, GUC_UNIT_MS},
	{"flusso.max_transaction_duration",
		"Longest a transaction of the worker runs before it commits and goes on in another.",
		"The slot is confirmed once the last of them commits; a statement is never cut.",
		&flusso_max_transaction_duration, 2000, 100, 3600000, GUC_UNIT_MS},
	{"flusso.build_timeout",
		"Longest one piece of work on an index may take: a build of its documents, a seed's chunk, the resolution of its changes.",
		"An index whose work takes longer is canceled and set aside, in phase error, until its definition is replaced or flusso_resnapshot() is called, so that it cannot keep the other indexes waiting. 0 sets no limit.",
		&flusso_build_timeout, 60000, 0, INT_MAX, GUC_UNIT_MS},
};

/*
 * Define every flusso.* setting.  flusso.max_databases sizes shared memory,
 * so it exists only while the library is preloaded, like the memory.
 */
void
settings_define(void)
{
	DefineCustomStringVariable("flusso.publication",
							   "Publication whose tables flusso streams.",
							   "flusso_provision() creates it and adds every table an index reads.",
							   &flusso_publication, "flusso", PGC_SIGHUP, 0,
							   NULL, NULL, NULL);
	for (int i = 0; i < lengthof(int_settings); i++)
	{
		const IntSetting *s = &int_settings[i];

		DefineCustomIntVariable(s->name, s->short_desc, s->long_desc, s->variable,
								s->boot, s->min, s->max, PGC_SIGHUP, s->unit,
								NULL, NULL, NULL);
	}
	DefineCustomBoolVariable("flusso.failover_slot",
							 "Create the worker's slot as a failover slot (PostgreSQL 17 and later).",
							 "A standby with sync_replication_slots keeps a copy, so a promoted standby goes on without seeding again. Read when the slot is created; 15 and 16 have no failover slots.",
							 &flusso_failover_slot, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	/* sizes shared memory: only while preloading, like the memory itself */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("flusso.max_databases",
								"Databases with flusso the launcher serves at most.",
								"Each takes an entry in shared memory, reserved at server start; databases without flusso take none.",
								&flusso_max_databases, 64, 1, 4096,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("flusso.capture_log",
							 "Record every applied change in flusso.capture_log (diagnostics and tests).",
							 NULL, &flusso_capture_log, false,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
#ifdef FLUSSO_TEST_HOOKS
	/* only in the build `make test` installs: see the Makefile */
	DefineCustomStringVariable("flusso.test_crash_file",
							   "Tests only: crash once between flush and confirm while this file exists.",
							   NULL, &flusso_test_crash_file, "",
							   PGC_SIGHUP, GUC_NOT_IN_SAMPLE | GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
	DefineCustomStringVariable("flusso.test_crash_confirmed_file",
							   "Tests only: crash once right after confirming the slot past a commit while this file exists.",
							   NULL, &flusso_test_crash_confirmed_file, "",
							   PGC_SIGHUP, GUC_NOT_IN_SAMPLE | GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
#endif
	MarkGUCPrefixReserved("flusso");
}
