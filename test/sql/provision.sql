--
-- provision: flusso_provision() creates the publication and replica
-- identities the indexes need, where the calling role may; idempotent;
-- repairs drift; never raises for a missing privilege.
--
CREATE EXTENSION flusso;
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixtures :abs_srcdir '/fixtures/'
\i :fixtures/schema.sql

-- a table named by a reserved word, and one with no usable identity
CREATE TABLE "select" (id int PRIMARY KEY, book_id bigint NOT NULL, "order" int);
CREATE TABLE notes (book_id bigint NOT NULL, body text NOT NULL);

SELECT flusso_create_index('books', pg_read_file(:'fixtures' || 'books.schema.yml'));
SELECT flusso_create_index('extras', $$
version: 1
table: books
primary_key: id
fields:
  - has_many: selections
    table: select
    foreign_key: book_id
    primary_key: id
    order_by: [ { column: order } ]
    fields: [ { integer: order, required: false } ]
  - has_many: notes
    table: notes
    foreign_key: book_id
    primary_key: body
    fields: [ { text: body, required: true } ]
$$);

-- The slot row and the slot and worker warnings come and go as the worker
-- starts (002_environment and 003_worker test them); leave them out here.
CREATE FUNCTION pg_temp.provisioned()
RETURNS TABLE (action text, sql text, applied boolean, blocker text)
LANGUAGE sql AS $$
	SELECT action, sql, applied, blocker
	FROM flusso_provision()
	WHERE action NOT LIKE 'replication slot %'
$$;
CREATE FUNCTION pg_temp.checked()
RETURNS TABLE (index text, path text, severity text, message text)
LANGUAGE sql AS $$
	SELECT index, path, severity, message
	FROM flusso_check()
	WHERE path NOT IN ('slot', 'worker')
$$;

-- a superuser: everything is applied, in order (identity before publishing),
-- except the indexes joins need on the columns they read by: only said
SELECT * FROM pg_temp.provisioned();
SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = 'flusso' ORDER BY 1, 2;
SELECT relname, relreplident FROM pg_class
WHERE relnamespace = 'public'::regnamespace
  AND relname IN ('reviews', 'loans', 'references', 'select', 'notes', 'books') ORDER BY 1;
SELECT * FROM pg_temp.checked();

-- the operator runs them, as they are (outside a transaction)
SELECT sql FROM pg_temp.provisioned() WHERE action LIKE 'index %' \gexec

-- idempotent: a second call applies nothing, and nothing is missing
SELECT * FROM pg_temp.checked();
SELECT * FROM pg_temp.provisioned();

-- drift: a table dropped from the publication by hand is reported, then restored
ALTER PUBLICATION flusso DROP TABLE reviews;
ALTER TABLE loans REPLICA IDENTITY DEFAULT;
SELECT * FROM pg_temp.checked();
SELECT * FROM pg_temp.provisioned();
SELECT * FROM pg_temp.checked();

-- an unprivileged member of flusso_admin gets the SQL and the reasons
DROP PUBLICATION flusso;
ALTER TABLE notes REPLICA IDENTITY DEFAULT;
CREATE ROLE regress_flusso_prov IN ROLE flusso_admin;
ALTER TABLE publishers OWNER TO regress_flusso_prov;
SET ROLE regress_flusso_prov;
SELECT * FROM pg_temp.provisioned();
RESET ROLE;

-- with CREATE on the database it creates the publication and publishes
-- what it owns; the rest still names its blocker
DO $$ BEGIN
	EXECUTE format('GRANT CREATE ON DATABASE %I TO regress_flusso_prov', current_database());
END $$;
SET ROLE regress_flusso_prov;
SELECT * FROM pg_temp.provisioned();
RESET ROLE;
SELECT pubname, pg_get_userbyid(pubowner) FROM pg_publication;
SELECT tablename FROM pg_publication_tables WHERE pubname = 'flusso';

DROP PUBLICATION flusso;
DO $$ BEGIN
	EXECUTE format('REVOKE CREATE ON DATABASE %I FROM regress_flusso_prov', current_database());
END $$;

-- flusso's own tables and the documents tables are no index's source: a
-- member's definitions naming them are errors to check, and a superuser's
-- provision publishes neither
SET ROLE regress_flusso_prov;
SELECT flusso_create_index('rejections', $$
version: 1
schema: flusso
table: rejected
primary_key: [index_name, id]
fields: [ { keyword: id, required: true }, { keyword: index_name, required: true } ]
$$);
SELECT flusso_create_index('documents', $$
version: 1
schema: flusso_docs
table: books
primary_key: id
fields: [ { keyword: id, required: true }, { json: doc, required: true } ]
$$);
RESET ROLE;
SELECT * FROM pg_temp.checked() WHERE index IN ('rejections', 'documents');
SELECT action, applied FROM pg_temp.provisioned() WHERE action ~ 'flusso';
SELECT schemaname, tablename FROM pg_publication_tables
WHERE pubname = 'flusso' AND schemaname IN ('flusso', 'flusso_docs') ORDER BY 1, 2;
SET ROLE regress_flusso_prov;
SELECT flusso_drop_index('rejections');
SELECT flusso_drop_index('documents');
RESET ROLE;
DROP PUBLICATION flusso;
ALTER TABLE publishers OWNER TO CURRENT_USER;
DROP ROLE regress_flusso_prov;
DROP TABLE book_authors, reviews, loans, "references", "select", notes, books, authors, publishers;
-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;
