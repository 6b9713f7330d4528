-- Seed 000: 512 random chars of a-f and spaces as a tsvector, GIN on it, btree on id.
-- {{rows}} is the scale knob (seed: 1,000,000).
drop table if exists test;
create table test(id int, info tsvector, crt_time timestamp);
CREATE OR REPLACE FUNCTION public.gen_rand_str(integer)
 RETURNS text LANGUAGE sql STRICT AS $function$
  select string_agg(a[random()*6+1],'') from generate_series(1,$1), (select array['a','b','c','d','e','f',' ']) t(a);
$function$;
insert into test select generate_series(1,{{rows}}), to_tsvector(gen_rand_str(512)), now();
create index idx_test_info on test using gin (info);
create index idx_test_id on test (id);
-- not in the seed: lets the runner read the pending list after each run
create extension if not exists pgstattuple;
