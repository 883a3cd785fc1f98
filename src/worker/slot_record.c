/*-------------------------------------------------------------------------
 *
 * slot_record.c
 *	  flusso.stream remembers that the database's slot was created, and is
 *	  emptied when flusso drops the slot on purpose (the last index gone).
 *	  So a slot missing while the record says it was made was lost behind
 *	  flusso's back (dropped by hand, invalidated): changes may be lost,
 *	  which is reported loudly and has every index seeded again.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/extension.h"

#include "util/xact.h"
#include "store/catalog_index.h"
#include "store/catalog_seed.h"
#include "store/catalog_stream.h"
#include "worker/slot_record.h"

/* Was a slot made for this database, and not dropped on purpose since? */
bool
slot_record_exists(void)
{
	bool		existed;

	(void) xact_begin(false, NULL, 0);
	existed = catalog_slot_recorded();
	xact_commit();
	return existed;
}

/* The slot was created: remember it. */
void
slot_record_save(const char *slot_name)
{
	(void) xact_begin(false, NULL, 0);
	catalog_record_slot(slot_name);
	xact_commit();
}

/*
 * The slot is about to be dropped on purpose: forget it was made, so that
 * the next worker creates one without taking it for lost.  Forgotten
 * first: a crash in between then costs a slot that is found and used, not
 * a false alarm.  Nothing to forget when the extension is gone.
 */
void
slot_record_forget(void)
{
	(void) xact_begin(false, NULL, 0);
	if (OidIsValid(get_extension_oid("flusso", true)))
		catalog_forget_slot();
	xact_commit();
}

/* The slot was lost: say so, and have every index seeded again. */
void
slot_record_lost(DatabaseEntry *entry, const char *slot_name)
{
	char	   *message = psprintf("replication slot \"%s\" was missing or invalidated and has been created again; changes made meanwhile may be lost, so every index will be seeded again",
								   slot_name);

	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("%s", message)));
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	shared_record_error(entry, message);
	LWLockRelease(flusso_shared->lock);

	(void) xact_begin(false, NULL, 0);
	catalog_mark_all_for_seeding();
	/* and from the start: the changes lost never reached any next generation */
	catalog_forget_all_seeds();
	xact_commit();
}
