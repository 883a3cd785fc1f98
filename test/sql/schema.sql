--
-- schema: the current schema, readable.  What CREATE EXTENSION flusso
-- holds (the released 0.1.0 and every upgrade script after it): each
-- table of flusso's with its columns, constraints and indexes, its
-- sequences and views, and each function with its arguments and result
-- (and SECURITY DEFINER, which none is).  010_upgrade.pl holds an upgraded database to the same
-- objects, so this output is what any chain of upgrades leaves too: a
-- script that changes the schema changes this test's expected output.
--
CREATE EXTENSION flusso;
SELECT c.relname AS "table", a.attname AS "column",
	pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
	CASE WHEN a.attnotnull THEN 'not null' ELSE '' END AS "null",
	coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '') AS "default"
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE c.relnamespace = 'flusso'::regnamespace AND c.relkind IN ('r', 'p')
ORDER BY c.relname, a.attnum;
SELECT c.conrelid::regclass AS "table", c.conname AS "constraint",
	pg_catalog.pg_get_constraintdef(c.oid) AS definition
FROM pg_catalog.pg_constraint c
WHERE c.connamespace = 'flusso'::regnamespace AND c.contype <> 'n'
ORDER BY c.conrelid::regclass::text, c.conname;
SELECT i.indrelid::regclass AS "table", i.indexrelid::regclass AS index,
	regexp_replace(pg_catalog.pg_get_indexdef(i.indexrelid), '^.* USING ', 'USING ') AS definition
FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
WHERE c.relnamespace = 'flusso'::regnamespace
ORDER BY i.indrelid::regclass::text, i.indexrelid::regclass::text;
SELECT c.relname AS name, CASE c.relkind WHEN 'S' THEN 'sequence' ELSE 'view' END AS kind
FROM pg_catalog.pg_class c
WHERE c.relnamespace = 'flusso'::regnamespace AND c.relkind IN ('S', 'v')
ORDER BY 1;
\pset format unaligned
SELECT p.proname || '(' || pg_catalog.pg_get_function_arguments(p.oid) || ') RETURNS '
	|| pg_catalog.pg_get_function_result(p.oid)
	|| CASE WHEN p.prosecdef THEN ' SECURITY DEFINER' ELSE '' END AS function
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid
	AND d.deptype = 'e'
	AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'flusso')
ORDER BY 1;
\pset format aligned
DROP EXTENSION flusso;
