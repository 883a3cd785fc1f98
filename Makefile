# flusso: a PostgreSQL extension that keeps search documents in sync.
#
#   make test       install what is missing, build, install, run every test
#   make demo       the same, then start a throwaway cluster with the sample
#   make demo-stop  stop and remove that cluster
#   make fuzz       build and run the schema parser fuzzer (clang, libFuzzer)
#
# The PGXS part needs pg_config; on a fresh machine `make test` and `make
# demo` first install the packages and then re-run make.

PG_MAJOR ?= 15
PG_CONFIG ?= $(firstword $(wildcard /usr/lib/postgresql/$(PG_MAJOR)/bin/pg_config) pg_config)
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

MODULE_big = flusso
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c src/*/*.c)))
EXTENSION = flusso
DATA = sql/flusso--0.1.0.sql sql/flusso--0.1.0--0.2.0.sql
PG_CPPFLAGS = -I$(srcdir)/src
# rebuild what includes a header when the header changes (CFLAGS only: the
# JIT bitcode build would overwrite the dependency files)
PG_CFLAGS = -MMD -MP
SHLIB_LINK = -lyaml
EXTRA_CLEAN = $(OBJS:.o=.d)

# pg_regress inputs (sql/<name>.sql, expected/<name>.out); run by test/check.sh
REGRESS = schema_formats schema_errors mapping catalog check provision capture build security

FUZZ_SECONDS ?= 600
.DEFAULT_GOAL := all

.PHONY: test demo demo-stop fuzz deps

deps:
	bash test/deps.sh

test: deps
	$(MAKE) --no-print-directory build-install
	bash test/check.sh $(REGRESS)

demo: deps
	$(MAKE) --no-print-directory build-install
	bash test/demo.sh start

demo-stop:
	bash test/demo.sh stop

fuzz:
	bash test/fuzz/run.sh $(FUZZ_SECONDS)

ifneq ($(PGXS),)
include $(PGXS)
-include $(OBJS:.o=.d)

.PHONY: build-install
build-install: all
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory install; \
	else sudo $(MAKE) --no-print-directory install; fi
endif
