#!/bin/sh
# A catalog schema (bench_floor) for the pgbench scripts beside this file, made by the
# catalog's own migrations, with the one profile create.sql's tables use; and the table
# two.sql inserts into.
set -eu
here=$(dirname "$0")
db=${1:-tributary_test}
{
  echo "DROP SCHEMA IF EXISTS bench_floor CASCADE; CREATE SCHEMA bench_floor; SET search_path = bench_floor;"
  cat "$here/../../migrations/"*.sql
  echo "INSERT INTO tributary_profiles (id, name_key, record) VALUES ('cp_P', 'prod', '{}');"
  echo "INSERT INTO tributary_keys VALUES ('p:cp_P', 1), ('pn:prod', 1);"
  echo "CREATE TABLE IF NOT EXISTS public.bench_t (x text);"
  echo "ANALYZE;"
} | psql -h 127.0.0.1 -U postgres -d "$db" -q
