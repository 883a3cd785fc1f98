/* flusso--0.1.0--0.2.0.sql: what flusso 0.2.0 changes in its SQL objects */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.2.0'" to load this file. \quit

-- Every function runs under a pinned search_path: neither a caller's nor a
-- database's search_path may choose an operator, function or cast that
-- runs inside them (CVE-2018-1058).  The C code pins it again wherever it
-- switches to another role.
ALTER FUNCTION flusso_create_index(text, text, boolean) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_drop_index(text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_mapping(text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_check() SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_provision() SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_change_text(bytea) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_change(bytea) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_build(text, text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_verify(text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_search(text, text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_status() SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_resnapshot(text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION flusso_register_database() SET search_path = pg_catalog, pg_temp;

-- Documents hold what an index reads with its owner's rights: only the
-- owner reads them now, and whom the owner grants SELECT to (grants are
-- carried over when a seed swaps a new table in).  0.1.0 granted SELECT
-- on every documents table to flusso_admin; take that back.
DO $$
DECLARE
	docs regclass;
BEGIN
	FOR docs IN
		SELECT c.oid::regclass FROM pg_catalog.pg_class c
		WHERE c.relnamespace OPERATOR(pg_catalog.=) ANY (ARRAY['flusso_docs'::pg_catalog.regnamespace,
															   'flusso_seed'::pg_catalog.regnamespace])
		  AND c.relkind OPERATOR(pg_catalog.=) 'r'
	LOOP
		EXECUTE pg_catalog.format('REVOKE SELECT ON %s FROM flusso_admin', docs);
	END LOOP;
END
$$;
