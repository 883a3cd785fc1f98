--
-- opensearch: OpenSearch servers and user mappings as PostgreSQL keeps
-- them (the flusso_opensearch wrapper's validator), and an index's sinks
-- (flusso_set_sinks).  Bad input is refused with a clear error and
-- changes nothing.  No cluster is needed: the TAP tests ship to a real one.
--
CREATE EXTENSION flusso;
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixtures :abs_srcdir '/fixtures/'
\i :fixtures/schema.sql
SELECT pg_read_file(:'fixtures' || 'books.schema.yml') AS books_definition \gset
SELECT flusso_create_index('books', :'books_definition');

-- a server needs a URL; its options are checked when set
CREATE SERVER nourl FOREIGN DATA WRAPPER flusso_opensearch;
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'ftp://example.com');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'not a url');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://admin:secret@example.com:9200');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com/?pretty');
-- several nodes of one cluster, separated by commas: each checked, none twice
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'http://a:9200, ftp://b:9200');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'http://a:9200,,http://b:9200');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'http://a:9200, http://a:9200/');
-- (a URL with credentials is not repeated in the error)
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'http://a:9200, https://u:secret@b:9200');
-- one scheme for every node: the credentials never go in clear text to one
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://a:9200, http://b:9200');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'HTTP://a:9200, https://b:9200');
CREATE SERVER nodes FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'https://a:9200, https://b:9200/ , HTTPS://c:9200');
ALTER SERVER nodes OPTIONS (SET url 'https://a:9200, http://c:9200');
SELECT srvoptions FROM pg_foreign_server WHERE srvname = 'nodes';
DROP SERVER nodes;
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', index_prefix 'Upper-');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', index_prefix '_x');
-- a prefix ends with '-' or '.', which no index name has: 'team_' + 'books'
-- and 'team' + '_books' would both make the alias team_books
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', index_prefix 'team_');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', index_prefix 'team');
-- no value holds a control character
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', ca_file E'/etc/ca.pem\n');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', tls_verify 'maybe');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', request_timeout '0');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', bulk_max_documents '10k');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', bulks_in_flight '17');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', ca_file 'relative.pem');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', client_key '/k.pem');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', aws_region 'EU WEST');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', password 'x');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'https://example.com', colour 'blue');
-- or an Elastic Cloud ID, which names the deployment's https URL: one of the two
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'https://example.com', cloud_id 'prod:ZXhhbXBsZS5jb206OTI0MyRlcy1pZA==');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (cloud_id 'ZXhhbXBsZS5jb206OTI0MyRlcy1pZA==');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (cloud_id 'prod:not base64!');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (cloud_id 'prod:ZXhhbXBsZS5jb20=');
CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (cloud_id 'prod:ZXhhIG1wbGUuY29tJHg=');
SELECT count(*) AS servers FROM pg_foreign_server;
CREATE SERVER cloud FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (cloud_id 'prod:dXMtY2VudHJhbDEuZ2NwLmNsb3VkLmVzLmlvJDAxMjNhYmNkJGtpYg==');
ALTER SERVER cloud OPTIONS (ADD url 'https://example.com');
ALTER SERVER cloud OPTIONS (DROP cloud_id);
-- API keys and bearer tokens (Elasticsearch), one way of authenticating per mapping
CREATE USER MAPPING FOR CURRENT_USER SERVER cloud OPTIONS (api_key_id 'VuaCfGcBCdbkQm-e5aOx');
CREATE USER MAPPING FOR CURRENT_USER SERVER cloud OPTIONS (api_key 'not a token');
CREATE USER MAPPING FOR CURRENT_USER SERVER cloud OPTIONS (bearer_token E'tok\r\nX-Injected: yes');
CREATE USER MAPPING FOR CURRENT_USER SERVER cloud OPTIONS (api_key 'a2V5', bearer_token 'dG9rZW4=');
CREATE USER MAPPING FOR CURRENT_USER SERVER cloud OPTIONS (user 'u', password 'p', api_key 'a2V5');
CREATE USER MAPPING FOR CURRENT_USER SERVER cloud
	OPTIONS (api_key 'ui2lp2axTNmsyakw9tvNnw', api_key_id 'VuaCfGcBCdbkQm-e5aOx');
ALTER USER MAPPING FOR CURRENT_USER SERVER cloud OPTIONS (ADD bearer_token 'dG9rZW4=');
ALTER USER MAPPING FOR CURRENT_USER SERVER cloud
	OPTIONS (DROP api_key, DROP api_key_id, ADD bearer_token 'dG9rZW4=');
SELECT umoptions FROM pg_user_mapping m JOIN pg_foreign_server s ON s.oid = m.umserver
	WHERE s.srvname = 'cloud';
DROP SERVER cloud CASCADE;

CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'http://127.0.0.1:1/', index_prefix 'regress-', connect_timeout '2');
ALTER SERVER search OPTIONS (ADD bulk_max_bytes '12');
ALTER SERVER search OPTIONS (DROP url);
SELECT srvoptions FROM pg_foreign_server WHERE srvname = 'search';

-- user mappings hold credentials, in pairs
CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (user 'flusso');
CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (password 'secret');
CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (aws_session_token 't');
CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (url 'http://x');
CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (user 'flusso', password '');
-- a line break in a credential would end the HTTP header it is sent in and
-- start another: no option holds a control character
CREATE USER MAPPING FOR CURRENT_USER SERVER search
	OPTIONS (aws_access_key_id 'AKIDEXAMPLE', aws_secret_access_key 'secret',
			 aws_session_token E'token\r\nX-Injected: yes');
CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (user E'flusso\n', password 'secret');
CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (user 'flusso', password E'sec\tret');
CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (user 'flusso', password 'secret');

-- a member of flusso_admin may not point flusso anywhere: only a superuser
-- creates servers, and grants USAGE on them
CREATE ROLE regress_os_admin LOGIN;
GRANT flusso_admin TO regress_os_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO regress_os_admin;
SET ROLE regress_os_admin;
CREATE SERVER mine FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'http://169.254.169.254');
SELECT flusso_create_index('theirs', :'books_definition');
SELECT flusso_set_sinks('theirs', ARRAY['table', 'search']);
-- nor use another role's credentials: the owner's user mapping is looked up
SELECT umoptions FROM pg_user_mappings WHERE srvname = 'search';
RESET ROLE;

-- the sinks of an index: 'table' and/or one flusso_opensearch server
CREATE FOREIGN DATA WRAPPER other_fdw;
CREATE SERVER notours FOREIGN DATA WRAPPER other_fdw;
SELECT flusso_set_sinks('books', ARRAY[]::text[]);
SELECT flusso_set_sinks('books', ARRAY['table', 'table']);
SELECT flusso_set_sinks('books', ARRAY['table', NULL]);
SELECT flusso_set_sinks('books', ARRAY['nosuch']);
SELECT flusso_set_sinks('books', ARRAY['notours']);
CREATE SERVER search2 FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url 'http://127.0.0.1:2');
SELECT flusso_set_sinks('books', ARRAY['search', 'search2']);
SELECT flusso_set_sinks('books', ARRAY['table'], '{"replicas": 1}');
SELECT flusso_set_sinks('books', ARRAY['search'], '{"replicas": -1}');
SELECT flusso_set_sinks('books', ARRAY['search'], '{"shards": 2.5}');
SELECT flusso_set_sinks('books', ARRAY['search'], '{"refresh_interval": "soon"}');
SELECT flusso_set_sinks('books', ARRAY['search'], '{"on_error": "ignore"}');
SELECT flusso_set_sinks('books', ARRAY['search'], '{"colour": "blue"}');
SELECT flusso_set_sinks('books', ARRAY['search'], '[]');
SELECT flusso_set_sinks('nosuch', ARRAY['table']);
-- nothing changed: the table sink alone, as every index has by default
SELECT count(*) AS sink_rows FROM flusso.sink;

-- both sinks; the options are completed with their defaults, and the new
-- sink has the index seeded
BEGIN;
SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0, "on_error": "stop"}');
SELECT sink, server_name, options FROM flusso.sink ORDER BY sink;
SELECT needs_seed FROM flusso.index WHERE name = 'books';
COMMIT;

-- another owner's index cannot be given sinks, nor take an alias over
SET ROLE regress_os_admin;
SELECT flusso_set_sinks('books', ARRAY['table']);
SELECT flusso_retry_rejected('books');
SELECT flusso_adopt('books');
RESET ROLE;

-- flusso_adopt: only an index with an OpenSearch sink has an alias to
-- take over; the shipper takes it at its next look
SELECT flusso_adopt('nosuch');
SELECT flusso_adopt('theirs');
SELECT index_name, take_alias FROM flusso.sink WHERE take_alias;
SELECT flusso_adopt('books');
SELECT index_name, take_alias FROM flusso.sink WHERE take_alias;

-- nothing rejected yet; flusso_rejected is for whom may read the documents
SELECT * FROM flusso_rejected('books');
SET ROLE regress_os_admin;
SELECT * FROM flusso_rejected('books');
RESET ROLE;
SELECT flusso_retry_rejected('books');

-- check says what stands in the way: here, no cluster answers
SELECT index, path, severity, message LIKE 'OpenSearch server "search" cannot be reached: %' AS unreachable
FROM flusso_check() WHERE path = 'sinks.opensearch';

-- a server the owner may not use any more
CREATE ROLE regress_os_owner LOGIN;
GRANT flusso_admin TO regress_os_owner;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO regress_os_owner;
GRANT USAGE ON FOREIGN SERVER search TO regress_os_owner;
SET ROLE regress_os_owner;
SELECT flusso_create_index('owned', :'books_definition');
SELECT flusso_set_sinks('owned', ARRAY['search']);
RESET ROLE;
-- another member's check does not spend the owner's credentials: the
-- cluster is asked (and an index created there) only by a role with the
-- owner's privileges
SET ROLE regress_os_admin;
SELECT index, severity, message, hint FROM flusso_check()
WHERE index = 'owned' AND path = 'sinks.opensearch';
SET ROLE regress_os_owner;
SELECT index, severity, message LIKE 'OpenSearch server "search" cannot be reached: %' AS unreachable
FROM flusso_check() WHERE index = 'owned' AND path = 'sinks.opensearch';
RESET ROLE;
-- a prefix set before 0.5.0 that does not end with '-' or '.' is reported
ALTER FOREIGN DATA WRAPPER flusso_opensearch NO VALIDATOR;
ALTER SERVER search OPTIONS (SET index_prefix 'regress');
ALTER FOREIGN DATA WRAPPER flusso_opensearch VALIDATOR flusso_opensearch_validator;
SELECT index, severity, message, hint FROM flusso_check()
WHERE index = 'owned' AND path = 'sinks.opensearch' AND severity = 'warning';
-- a url set before 0.9.0 that mixes http and https nodes: the http ones
-- are never used, and check says so
ALTER FOREIGN DATA WRAPPER flusso_opensearch NO VALIDATOR;
ALTER SERVER search OPTIONS (SET url 'https://127.0.0.1:1/, http://127.0.0.1:2/');
ALTER FOREIGN DATA WRAPPER flusso_opensearch VALIDATOR flusso_opensearch_validator;
SELECT index, severity, message, hint FROM flusso_check()
WHERE index = 'owned' AND path = 'sinks.opensearch' AND message LIKE '%http nodes beside%';
ALTER SERVER search OPTIONS (SET url 'http://127.0.0.1:1/');
-- and no index is given such a server
SET ROLE regress_os_owner;
SELECT flusso_set_sinks('owned', ARRAY['table', 'search']);
RESET ROLE;
ALTER SERVER search OPTIONS (SET index_prefix 'regress-');
REVOKE USAGE ON FOREIGN SERVER search FROM regress_os_owner;
SELECT index, severity, message, hint FROM flusso_check()
WHERE index = 'owned' AND path = 'sinks.opensearch';
-- provision grants it back, where the caller may
SELECT action, sql, applied FROM flusso_provision() WHERE action LIKE 'usage on server%';
SELECT has_server_privilege('regress_os_owner', 'search', 'USAGE') AS usable;

-- an OpenSearch-only index keeps its documents table, empty: the index
-- lives as long as it and follows its owner; there is nothing to search
SELECT to_regclass('flusso_docs.owned') IS NOT NULL AS kept;
SELECT * FROM flusso_search('owned', 'levi');
SELECT flusso_set_sinks('owned', ARRAY['table']);
SELECT count(*) AS searched FROM flusso_search('owned', 'levi');

-- dropping the index forgets its sinks; its OpenSearch indexes are retired
-- for the shipper to delete, or kept
SELECT flusso_drop_index('owned');
SELECT flusso_drop_index('books', keep_opensearch => true);
SELECT count(*) AS sink_rows FROM flusso.sink;
SELECT count(*) AS generations FROM flusso.opensearch_generation WHERE state <> 'retired';

DROP USER MAPPING FOR CURRENT_USER SERVER search;
DROP SERVER search;
DROP SERVER search2;
DROP SERVER notours;
DROP FOREIGN DATA WRAPPER other_fdw;
-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;
DROP PUBLICATION flusso;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM regress_os_admin, regress_os_owner;
DROP ROLE regress_os_admin;
DROP ROLE regress_os_owner;
DROP TABLE "references", loans, reviews, book_authors, books, authors, publishers;
