/*-------------------------------------------------------------------------
 *
 * ship_digest.c
 *	  No _bulk item for a document OpenSearch already holds: a bulk's
 *	  documents, once built, are compared with what each generation holds
 *	  as flusso last wrote it (flusso.opensearch_digest), and only those
 *	  that differ are sent.
 *
 * An UPDATE that changes no column an index reads (a timestamp, a counter,
 * an ORM saving the whole row), without REPLICA IDENTITY FULL to prove it,
 * rebuilds the documents it touches; so does a row set to the value it
 * had.  Sent, each costs OpenSearch a new version of a document it holds
 * already, its largest cost of all.
 *
 * What a generation holds is known by a digest (the first 16 bytes of the
 * SHA-256 of the document's source, collision-free for any content an
 * owner could choose) written only for an item OpenSearch answered it
 * stored (2xx: not a 409, whose newer version was written by another
 * item, nor a refusal).  A digest row exists only while no write of that
 * document is in flight or unaccounted for: the row of each document about
 * to be sent that does not match is deleted in the transaction that read
 * it, before the bulk goes (as is the row of a document about to be
 * deleted), and written again once OpenSearch answered.  So a bulk that
 * failed, a response lost with the connection, or a shipper that died
 * between the answer and its record leave no row, and the next rebuild of
 * those documents is sent whatever it holds: nothing OpenSearch did not
 * store is ever taken as stored, and a document is skipped only when the
 * generation holds exactly that source.  The table is unlogged: a crash,
 * a promoted standby, a restored backup start with no row, which only
 * sends the next rebuilds again.  A generation emptied (its root table
 * truncated) or forgotten loses its rows first.
 *
 * A row whose documents every generation holds leaves the outbox with the
 * bulk's rows, without being sent or counted as shipped.  Order is kept:
 * the row's id is not in flight (ship_flight.c), and what OpenSearch
 * holds is already the newest version flusso wrote.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "shipper/ship_digest.h"
#include "store/catalog_opensearch_digest.h"

/* The documents of a bulk, one element per row and generation, as arrays. */
typedef struct DigestArrays
{
	Datum	   *generations;
	Datum	   *ids;
	Datum	   *digests;
	bool	   *nulls;
	int		   *row;			/* the row of each element */
	int		   *target;			/* the position of its generation */
	int			n;
} DigestArrays;

static void
arrays_init(DigestArrays *a, int most)
{
	a->generations = palloc(sizeof(Datum) * Max(most, 1));
	a->ids = palloc(sizeof(Datum) * Max(most, 1));
	a->digests = palloc(sizeof(Datum) * Max(most, 1));
	a->nulls = palloc0(sizeof(bool) * Max(most, 1));
	a->row = palloc(sizeof(int) * Max(most, 1));
	a->target = palloc(sizeof(int) * Max(most, 1));
	a->n = 0;
}

/* Add row i of b for the generation at position t (no digest: a delete). */
static void
arrays_add(DigestArrays *a, BulkBatch *b, int i, int t)
{
	QueuedRow  *r = &b->rows[i];
	ShipGeneration *g = list_nth(b->targets, t);

	a->generations[a->n] = Int64GetDatum(g->row.generation);
	a->ids[a->n] = CStringGetTextDatum(r->id);
	if (r->doc != NULL)
	{
		bytea	   *digest = palloc(VARHDRSZ + SHIP_DIGEST_LEN);

		SET_VARSIZE(digest, VARHDRSZ + SHIP_DIGEST_LEN);
		memcpy(VARDATA(digest), r->digest, SHIP_DIGEST_LEN);
		a->digests[a->n] = PointerGetDatum(digest);
	}
	else
		a->nulls[a->n] = true;
	a->row[a->n] = i;
	a->target[a->n] = t;
	a->n++;
}

static Datum
array_of(Datum *elems, bool *nulls, int n, Oid type, int len, bool byval, char align)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};

	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, type, len, byval, align));
}

static Datum
generations_array(const DigestArrays *a)
{
	return array_of(a->generations, NULL, a->n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

static Datum
ids_array(const DigestArrays *a)
{
	return array_of(a->ids, NULL, a->n, TEXTOID, -1, false, TYPALIGN_INT);
}

static Datum
digests_array(const DigestArrays *a)
{
	return array_of(a->digests, a->nulls, a->n, BYTEAOID, -1, false, TYPALIGN_INT);
}

/* The digest of each document built, into its row. */
static void
digest_documents(BulkBatch *b)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		full[PG_SHA256_DIGEST_LENGTH];

	for (int i = 0; i < b->nrows; i++)
	{
		QueuedRow  *r = &b->rows[i];

		if (r->doc == NULL)
			continue;
		if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
			pg_cryptohash_update(ctx, (const uint8 *) r->doc, strlen(r->doc)) < 0 ||
			pg_cryptohash_final(ctx, full, sizeof(full)) < 0)
			elog(ERROR, "could not compute the SHA-256 digest of a document: %s",
				 pg_cryptohash_error(ctx));
		memcpy(r->digest, full, SHIP_DIGEST_LEN);
	}
	pg_cryptohash_free(ctx);
}

/*
 * Which generations hold the documents of b as they were built, into each
 * row's held (bit t: the target at position t); the digest rows of every
 * other document b may send are deleted.  In the transaction that built
 * them, as the shipper.
 */
void
ship_digest_compare(BulkBatch *b)
{
	int			ntargets = Min(list_length(b->targets), SHIP_MAX_DIGEST_TARGETS);
	DigestArrays a;
	int		   *held;
	int			nheld;

	if (b->nrows == 0 || !digest_in_catalog())
		return;
	digest_documents(b);
	arrays_init(&a, b->nrows * ntargets);
	for (int i = 0; i < b->nrows; i++)
	{
		for (int t = 0; t < ntargets; t++)
		{
			if (ship_generation_takes(list_nth(b->targets, t), &b->rows[i]))
				arrays_add(&a, b, i, t);
		}
	}
	if (a.n == 0)
		return;
	nheld = digest_keep_held(generations_array(&a), ids_array(&a), digests_array(&a), &held);
	for (int k = 0; k < nheld; k++)
	{
		int			e = held[k] - 1;

		b->rows[a.row[e]].held |= (uint32) 1 << a.target[e];
	}
}

/* Does the generation at position t hold r's document as built? */
bool
ship_digest_held(const QueuedRow *r, int t)
{
	return t < SHIP_MAX_DIGEST_TARGETS && r->doc != NULL && (r->held & ((uint32) 1 << t)) != 0;
}

/*
 * Which of the documents r sent were stored, as the bulk's results say:
 * into its written (bit t: the target at position t).  A 409 (a newer
 * version is there), a refusal or a delete is not.
 */
void
ship_digest_note_results(const BulkBatch *b, QueuedRow *r, const BulkItemResult *results)
{
	r->written = 0;
	for (int k = r->first_item; k < r->first_item + r->nitems; k++)
	{
		int			t = b->item_targets[k];

		if (r->doc != NULL && t < SHIP_MAX_DIGEST_TARGETS &&
			results[k].status >= 200 && results[k].status < 300)
			r->written |= (uint32) 1 << t;
	}
}

/*
 * The generations hold the documents b's items stored, in the caller's
 * transaction (the bulk's record).
 */
void
ship_digest_record(BulkBatch *b)
{
	int			ntargets = Min(list_length(b->targets), SHIP_MAX_DIGEST_TARGETS);
	DigestArrays a;

	if (b->nrows == 0 || !digest_in_catalog())
		return;
	arrays_init(&a, b->nrows * ntargets);
	for (int i = 0; i < b->nrows; i++)
	{
		for (int t = 0; t < ntargets; t++)
		{
			if (b->rows[i].first_item >= 0 && (b->rows[i].written & ((uint32) 1 << t)) != 0)
				arrays_add(&a, b, i, t);
		}
	}
	if (a.n > 0)
		digest_record(generations_array(&a), ids_array(&a), digests_array(&a));
}
