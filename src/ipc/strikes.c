/*-------------------------------------------------------------------------
 *
 * strikes.c
 *	  Remembers which index the worker is working on, in a file, so that
 *	  when the worker dies — by an error it could not isolate, or by a
 *	  signal, which restarts the whole cluster and resets shared memory —
 *	  the next worker knows which index was to blame.  An index blamed
 *	  STRIKES_LIMIT times in a row for its current version is set aside:
 *	  phase error, not built, not retried, until its definition is
 *	  replaced or flusso_resnapshot() asks for it again.  A death while no
 *	  index was being worked on (decoding, say) is counted for the database,
 *	  and the next worker waits longer before it starts.
 *
 * The file, pg_flusso/strikes.<database oid> under the data directory,
 * holds a few lines of text: whether a worker is running, the index in
 * hand, the deaths blamed on no index, and each index's strikes.  A worker
 * starting writes it whole through a temporary file and a rename, then
 * keeps it open and rewrites it in place, with one pwrite() from its
 * start: the index in hand changes twice per piece of work, hundreds of
 * times a second under a steady load, and creating and renaming a file
 * each time cost the worker 40 % of its CPU.  A process dies before or
 * after a system call, never inside one, so a worker's death leaves one
 * whole version; a shorter version is padded with empty lines, which
 * reading skips.  No fsync, since a crash of the cluster leaves the page
 * cache alone, and a crash of the machine may leave the file torn, which
 * reading survives (a line it cannot read is skipped) and at worst
 * restarts a count, which is harmless.  A clean exit (stop, SIGTERM,
 * restart for new definitions) clears the running mark, so only real
 * deaths count.  A build that outlasted flusso.build_timeout, and an exit
 * to end one that would not end when canceled, set the index aside at
 * once, for that reason (strikes_aside), and across restarts, since the
 * changes the worker replays would hold it as long again.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "utils/memutils.h"

#include "settings.h"
#include "util/attempt.h"
#include "ipc/strikes.h"

#define STRIKES_DIRECTORY "pg_flusso"
#define VERSION_LEN 64

typedef struct Strike
{
	char		name[NAMEDATALEN];
	char		version[VERSION_LEN];
	int			count;
	StrikeAside aside;			/* set aside for its builds' time, and why */
} Strike;

typedef struct StrikeFile
{
	char		path[MAXPGPATH];
	bool		running;		/* a worker runs, or died without exiting */
	char		in_hand[NAMEDATALEN];	/* the index being worked on, or "" */
	char		in_hand_version[VERSION_LEN];
	int			unattributed;	/* deaths with no index in hand */
	int			nstrikes;
	int			maxstrikes;
	Strike	   *strikes;		/* in TopMemoryContext, grown as needed */
	int			fd;				/* the file, open once written whole, or -1 */
	int			written;		/* the longest version written through fd */
} StrikeFile;

static StrikeFile file = {.fd = -1};

/* The file's text, in a StringInfo of TopMemoryContext reused by each save. */
static StringInfo
render(void)
{
	static StringInfo text = NULL;

	if (text == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		text = makeStringInfo();
		MemoryContextSwitchTo(old);
	}
	resetStringInfo(text);
	appendStringInfo(text, "running %d\nin_hand %s %s\nunattributed %d\n",
					 file.running ? 1 : 0, file.in_hand[0] ? file.in_hand : "-",
					 file.in_hand[0] ? file.in_hand_version : "-", file.unattributed);
	for (int i = 0; i < file.nstrikes; i++)
	{
		if (file.strikes[i].count > 0)
			appendStringInfo(text, "strike %s %s %d %d\n", file.strikes[i].name,
							 file.strikes[i].version, file.strikes[i].count,
							 (int) file.strikes[i].aside);
	}
	return text;
}

/* Write the file whole: a temporary file renamed over it. */
static void
save_whole(StringInfo text)
{
	char		temp[MAXPGPATH];
	FILE	   *out;

	snprintf(temp, sizeof(temp), "%s.tmp", file.path);
	out = AllocateFile(temp, PG_BINARY_W);
	if (out == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", temp)));
	if (fwrite(text->data, 1, text->len, out) != text->len)
	{
		FreeFile(out);
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", temp)));
	}
	if (FreeFile(out) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", temp)));
	if (rename(temp, file.path) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rename file \"%s\" to \"%s\": %m", temp, file.path)));
}

/*
 * Rewrite the open file in place: one write from its start, padded with
 * empty lines up to the longest version written, so that nothing of an
 * earlier one is left to read.
 */
static void
save(void)
{
	StringInfo	text = render();

	if (file.fd < 0)
	{
		save_whole(text);
		return;
	}
	while (text->len < file.written)
		appendStringInfoChar(text, '\n');
	errno = 0;
	if (pg_pwrite(file.fd, text->data, text->len, 0) != text->len)
	{
		/* a short write sets no errno: most likely out of disk space */
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", file.path)));
	}
	file.written = text->len;
}

/* A new strike, with no count yet. */
static Strike *
add_strike(const char *name, const char *version)
{
	Strike	   *strike;

	if (file.nstrikes == file.maxstrikes)
	{
		file.maxstrikes = Max(16, file.maxstrikes * 2);
		file.strikes = file.strikes
			? repalloc(file.strikes, sizeof(Strike) * file.maxstrikes)
			: MemoryContextAlloc(TopMemoryContext, sizeof(Strike) * file.maxstrikes);
	}
	strike = &file.strikes[file.nstrikes++];
	memset(strike, 0, sizeof(Strike));
	strlcpy(strike->name, name, NAMEDATALEN);
	strlcpy(strike->version, version, VERSION_LEN);
	return strike;
}

static void
load(void)
{
	FILE	   *in = AllocateFile(file.path, PG_BINARY_R);
	char		line[NAMEDATALEN + VERSION_LEN + 64];

	if (in == NULL)
		return;
	while (fgets(line, sizeof(line), in) != NULL)
	{
		int			running;
		char		name[NAMEDATALEN];
		char		version[VERSION_LEN];
		int			count;
		int			aside = 0;

		if (sscanf(line, "running %d", &running) == 1)
			file.running = running != 0;
		else if (sscanf(line, "in_hand %63s %63s", name, version) == 2)
		{
			strlcpy(file.in_hand, strcmp(name, "-") == 0 ? "" : name, NAMEDATALEN);
			strlcpy(file.in_hand_version, version, VERSION_LEN);
		}
		else if (sscanf(line, "unattributed %d", &count) == 1)
			file.unattributed = count;
		else if (sscanf(line, "strike %63s %63s %d %d", name, version, &count, &aside) >= 3)
		{
			Strike	   *strike = add_strike(name, version);

			strike->count = count;
			strike->aside = aside == STRIKE_TIMED_OUT || aside == STRIKE_OVERRAN
				? (StrikeAside) aside : STRIKE_NOT_ASIDE;
		}
	}
	FreeFile(in);
}

static Strike *
find(const char *index_name, bool create)
{
	for (int i = 0; i < file.nstrikes; i++)
	{
		if (strcmp(file.strikes[i].name, index_name) == 0)
			return &file.strikes[i];
	}
	if (!create)
		return NULL;
	return add_strike(index_name, "");
}

/* The worker died: blame the index in hand, or nobody. */
static void
count_death(void)
{
	Strike	   *strike = file.in_hand[0] ? find(file.in_hand, true) : NULL;

	if (strike && strcmp(strike->version, file.in_hand_version) != 0)
	{
		strlcpy(strike->version, file.in_hand_version, VERSION_LEN);
		strike->count = 0;
		strike->aside = STRIKE_NOT_ASIDE;
	}
	if (strike)
		strike->count++;
	else
		file.unattributed++;
	file.in_hand[0] = '\0';
}

/* Set index_name aside at version, for why, from now on. */
static void
mark_aside(const char *index_name, const char *version, StrikeAside why)
{
	Strike	   *strike = find(index_name, true);

	strlcpy(strike->version, version, VERSION_LEN);
	strike->count = STRIKES_LIMIT;
	strike->aside = why;
}

/*
 * The worker exits.  If it does because the index in hand had a build that
 * would not end when canceled (util/attempt.c), the index is set aside at
 * once, for that reason: it would hold the next worker as long.  Any
 * other exit through here is clean.
 */
static void
clean_exit(int code, Datum arg)
{
	if (attempt_overran() && file.in_hand[0])
	{
		ereport(LOG,
				(errmsg("flusso index \"%s\": a build ran past flusso.build_timeout (%d ms) and would not end when canceled: the worker exits to end it, and the index is set aside",
						file.in_hand, flusso_build_timeout)));
		mark_aside(file.in_hand, file.in_hand_version, STRIKE_OVERRAN);
	}
	file.running = false;
	file.in_hand[0] = '\0';
	save();
}

/*
 * At the start of the worker of database dboid: count the death of the
 * last worker if it did not exit cleanly, and mark this one running.
 */
void
strikes_open(Oid dboid)
{
	if (file.fd >= 0)
		close(file.fd);
	memset(&file, 0, sizeof(file));
	file.fd = -1;
	if (MakePGDirectory(STRIKES_DIRECTORY) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", STRIKES_DIRECTORY)));
	snprintf(file.path, sizeof(file.path), "%s/strikes.%u", STRIKES_DIRECTORY, dboid);
	load();
	if (file.running)
		count_death();
	file.running = true;
	save();
	/* from now on, rewritten in place */
	file.fd = BasicOpenFile(file.path, O_RDWR | PG_BINARY);
	if (file.fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", file.path)));
	file.written = render()->len;
	before_shmem_exit(clean_exit, (Datum) 0);
}

/* Deaths in a row while no index was in hand. */
int
strikes_unattributed(void)
{
	return file.unattributed;
}

/* The worker starts working on an index: until strikes_end(). */
void
strikes_begin(const char *index_name, const char *version)
{
	strlcpy(file.in_hand, index_name, NAMEDATALEN);
	strlcpy(file.in_hand_version, version, VERSION_LEN);
	save();
}

/* Done with the index in hand, whether it succeeded or failed. */
void
strikes_end(void)
{
	file.in_hand[0] = '\0';
	save();
}

/*
 * The index made durable progress (a batch of its documents, or a chunk
 * of its seed, committed; a seed completed): its strikes are forgiven.
 * Compiling it or starting a seed is no progress, or an index whose every
 * seed dies at its first chunk would never be set aside.
 */
void
strikes_progressed(const char *index_name)
{
	Strike	   *strike = find(index_name, false);

	if (strike == NULL || strike->count == 0 || strike->aside != STRIKE_NOT_ASIDE)
		return;
	strike->count = 0;
	save();
}

/* The worker is about to exit with an error: that is a death too. */
void
strikes_record_error(void)
{
	count_death();
	file.running = false;
	save();
}

/* The worker got to stream: deaths with no index in hand are forgiven. */
void
strikes_healthy(void)
{
	if (file.unattributed == 0)
		return;
	file.unattributed = 0;
	save();
}

/* Deaths in a row blamed on index_name at this version. */
int
strikes_of(const char *index_name, const char *version)
{
	Strike	   *strike = find(index_name, false);

	if (strike == NULL)
		return 0;
	if (strcmp(strike->version, version) != 0)
	{
		/* a new definition starts afresh */
		strlcpy(strike->version, version, VERSION_LEN);
		strike->count = 0;
		strike->aside = STRIKE_NOT_ASIDE;
	}
	return strike->count;
}

/*
 * A build of index_name (at version) outlasted flusso.build_timeout: it is
 * set aside, across the worker's restarts too, until its definition is
 * replaced or flusso_resnapshot() asks for it again.
 */
void
strikes_set_aside(const char *index_name, const char *version)
{
	mark_aside(index_name, version, STRIKE_TIMED_OUT);
	save();
}

/*
 * Was index_name set aside at this version for the time its builds took
 * (STRIKE_TIMED_OUT, STRIKE_OVERRAN), rather than for the worker's deaths?
 */
StrikeAside
strikes_aside(const char *index_name, const char *version)
{
	Strike	   *strike = find(index_name, false);

	if (strike == NULL || strike->count < STRIKES_LIMIT || strcmp(strike->version, version) != 0)
		return STRIKE_NOT_ASIDE;
	return strike->aside;
}

/* flusso_resnapshot() asked for the index again: give it another chance. */
void
strikes_forget(const char *index_name)
{
	Strike	   *strike = find(index_name, false);

	if (strike != NULL && strike->aside != STRIKE_NOT_ASIDE)
	{
		strike->aside = STRIKE_NOT_ASIDE;
		strike->count = 0;
		save();
	}
	strikes_progressed(index_name);
}
