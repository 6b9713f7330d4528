-- Seed 001: serial4 primary key, pg_trgm GIN on a text column.
create extension if not exists pg_trgm;
create extension if not exists pgstattuple;
drop table if exists trgm_test;
create table trgm_test(id serial4 primary key, info text);
create index trgm_test_gin on trgm_test using gin (info gin_trgm_ops);
