# flusso: a PostgreSQL extension that keeps search documents in sync.
#
#   make test       install what is missing, build, install, run every test
#   make demo       the same, then start a throwaway cluster with the sample
#   make demo-opensearch   the same, with a real OpenSearch node books ship to
#   make demo-stop  stop and remove that cluster (and its node)
#   make fuzz       build and run the schema parser fuzzer (clang, libFuzzer)
#   make installcheck, make prove_installcheck
#                   what packagers run, once installed (docs/setup.md: For packagers)
#
# The PGXS part needs pg_config; on a fresh machine `make test` and `make
# demo` first install the packages and then re-run make.

PG_MAJOR ?= 15
PG_CONFIG ?= $(firstword $(wildcard /usr/lib/postgresql/$(PG_MAJOR)/bin/pg_config) pg_config)
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

MODULE_big = flusso
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c src/*/*.c)))
EXTENSION = flusso
DATA = sql/flusso--0.1.0.sql sql/flusso--0.1.0--0.2.0.sql sql/flusso--0.2.0--0.3.0.sql sql/flusso--0.3.0--0.4.0.sql sql/flusso--0.4.0--0.5.0.sql sql/flusso--0.5.0--0.6.0.sql sql/flusso--0.6.0--0.7.0.sql sql/flusso--0.7.0--0.8.0.sql sql/flusso--0.8.0--0.9.0.sql sql/flusso--0.9.0--0.10.0.sql sql/flusso--0.10.0--0.11.0.sql
# `make test` builds with FLUSSO_TEST_HOOKS=1: the fault injection the
# tests use (flusso.test_crash_file) exists only in that build.  The flags
# are recorded in .build-flags, which every object depends on, so that a
# test build and a release build are never mixed.
BUILD_FLAGS := $(if $(FLUSSO_TEST_HOOKS),-DFLUSSO_TEST_HOOKS)
PG_CPPFLAGS = -I$(srcdir)/src $(BUILD_FLAGS)
# rebuild what includes a header when the header changes (CFLAGS only: the
# JIT bitcode build would overwrite the dependency files)
PG_CFLAGS = -MMD -MP
# Only what PostgreSQL looks up in the library is exported (flusso.map):
# the module magic, _PG_init, the output plugin's entry point, the SQL
# functions and the background workers' entry points, all named flusso_*.
SHLIB_LINK = -lyaml -lcurl -Wl,--version-script=$(srcdir)/flusso.map
EXTRA_CLEAN = $(OBJS:.o=.d) .build-flags

# pg_regress inputs in test/sql/<name>.sql, apart from the install scripts
# (sql/flusso--*.sql), and their outputs in expected/<name>.out, where
# pg_regress looks in its output directory first; run by test/check.sh,
# and by installcheck; in UTF-8, whatever the server's default: the
# capture test feeds flusso_change_text() bytes that are not text in it
REGRESS_OPTS = --inputdir=test --encoding=UTF8
REGRESS = schema schema_formats schema_errors mapping catalog check provision capture build security opensearch partitions draft draft_hostile statements resnapshot
# What packagers run (pg_buildext): `make installcheck` runs REGRESS against
# the server PGHOST/PGPORT name, configured as test/flusso.conf says, then
# the TAP tests, which start their own clusters from the installed build;
# `make prove_installcheck` runs the TAP tests alone.
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

FUZZ_SECONDS ?= 600
.DEFAULT_GOAL := all

.PHONY: test demo demo-opensearch demo-stop fuzz deps

deps:
	bash test/deps.sh

test: deps
	$(MAKE) --no-print-directory build-install FLUSSO_TEST_HOOKS=1
	bash test/check.sh $(REGRESS)

demo: deps
	$(MAKE) --no-print-directory build-install
	bash test/demo.sh start

demo-opensearch: deps
	$(MAKE) --no-print-directory build-install
	bash test/demo.sh start opensearch

demo-stop:
	bash test/demo.sh stop

fuzz:
	bash test/fuzz/run.sh $(FUZZ_SECONDS)

ifneq ($(PGXS),)
include $(PGXS)
-include $(OBJS:.o=.d)
# A server built by a newer gcc records warning options an older one lacks
# (PyPI's PostgreSQL 18 has -Wmissing-variable-declarations, which Debian
# 12's gcc 12 rejects): keep only those this compiler knows.
ifeq ($(shell $(CC) -Wmissing-variable-declarations -E -x c /dev/null >/dev/null 2>&1 || echo no),no)
override CFLAGS := $(filter-out -Wmissing-variable-declarations,$(CFLAGS))
endif
# the TAP tests' own modules (FlussoTest.pm, OpenSearchNode.pm)
PG_PROVE_FLAGS += -I $(srcdir)/test

.build-flags: FORCE
	@echo '$(BUILD_FLAGS)' | cmp -s - $@ || echo '$(BUILD_FLAGS)' > $@
$(OBJS) $(OBJS:.o=.bc): .build-flags
.PHONY: FORCE

.PHONY: prove_installcheck
prove_installcheck:
	$(prove_installcheck)

.PHONY: build-install
build-install: all
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory install; \
	else sudo $(MAKE) --no-print-directory install; fi
endif
