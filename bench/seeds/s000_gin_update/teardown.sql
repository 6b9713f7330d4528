drop table if exists test;
drop function if exists public.gen_rand_str(integer);
