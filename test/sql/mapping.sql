--
-- mapping: the OpenSearch index body derived from a schema alone.
--
CREATE EXTENSION flusso;
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixtures :abs_srcdir '/fixtures/'

-- The full body for the books fixture.
SELECT flusso_create_index('books', pg_read_file(:'fixtures' || 'books.schema.yml'));
SELECT jsonb_pretty(flusso_mapping('books'));

-- Every field kind, one property per line.
SELECT flusso_create_index('everything', pg_read_file(:'fixtures' || 'everything.schema.yml'));
SELECT key AS field, value AS property
FROM jsonb_each(flusso_mapping('everything') -> 'mappings' -> 'properties')
ORDER BY key;
SELECT jsonb_pretty(flusso_mapping('everything') -> 'settings' -> 'analysis' -> 'char_filter');
SELECT jsonb_object_keys(flusso_mapping('everything') -> 'settings' -> 'analysis' -> 'normalizer');

-- options are laid over the derived property last, key by key.
SELECT flusso_create_index('overrides', $$
version: 1
table: t
fields:
  - identifier: code
    required: true
    options: { analyzer: standard }
  - keyword: tag
    required: true
    options: { fields: { raw: { type: keyword } } }
  - map: labels
    values: keyword
    required: false
    options: { dynamic: false }
  - has_many: items
    table: items
    foreign_key: t_id
    primary_key: id
    options: { include_in_parent: true }
    fields:
      - enum: state
        required: true
        variants: [new, old, v2, v3, v4, v5, v6, v7, v8, v9, v10]
$$);
SELECT jsonb_pretty(flusso_mapping('overrides') -> 'mappings');
SELECT jsonb_pretty(flusso_mapping('overrides') -> 'settings' -> 'analysis' -> 'char_filter');

SELECT flusso_mapping('missing');

-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;
