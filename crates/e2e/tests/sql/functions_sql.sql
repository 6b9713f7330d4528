-- User-defined LANGUAGE sql functions: CREATE [OR REPLACE] / DROP FUNCTION, overloads,
-- named arguments, DEFAULTs, STRICT, set-returning functions in FROM, recursion and errors.
-- Each "-- case:" block runs in its own psql session on keel and on PostgreSQL 15; random()
-- results never reach the output (only their lengths and counts).

-- case: seed_000_generator
create or replace function gen_rand_str(int) returns text as $function$
  select string_agg(a[(random()*6)::int+1], '') from generate_series(1,$1), (select array['a','b','c','d','e','f','g']) t(a);
$function$ language sql strict;
select length(gen_rand_str(512));
create table fn_t(id int, info text); insert into fn_t select g, gen_rand_str(64) from generate_series(1,1000) g;
select count(*), count(distinct info) > 990 as distinct_rows, min(length(info)), max(length(info)) from fn_t;
select gen_rand_str(null) is null as strict_null;
select count(*) from fn_t where info ~ '^[a-g]+$';
drop table fn_t;
drop function gen_rand_str(int);

-- case: create_and_call
create function fn_add1(a int) returns int language sql immutable as 'select a + 1';
select fn_add1(1), fn_add1(fn_add1(5)), fn_add1(null);
create function fn_concat3(a text, b text, c text) returns text language sql as $$ select a || b || c $$;
select fn_concat3('x', 'y', 'z');
create table fn_nums (n int);
insert into fn_nums values (1), (2), (3);
select n, fn_add1(n) from fn_nums order by n;
select sum(fn_add1(n)) from fn_nums where fn_add1(n) > 2;
drop table fn_nums;
drop function fn_add1(int);
drop function fn_concat3;

-- case: overloads_and_named_args
create function fn_add(a int, b int default 10) returns int language sql immutable as 'select a + $2';
select fn_add(1), fn_add(1, 2), fn_add(b => 5, a => 1), fn_add(a => 7);
create function fn_add(a text, b text) returns text language sql as $$ select a || b $$;
select fn_add('x', 'y');
select fn_add(2, 3);
select fn_add(1.5, 2);
select fn_add(c => 1);
drop function fn_add(int, int);
drop function fn_add(text, text);

-- case: strict_and_called_on_null
create function fn_s(a int) returns int language sql strict as 'select coalesce(a, 0) + 1';
create function fn_c(a int) returns int language sql called on null input as 'select coalesce(a, 0) + 1';
create function fn_r(a int) returns int language sql returns null on null input as 'select coalesce(a, 0) + 1';
select fn_s(null) is null as s, fn_c(null), fn_r(null) is null as r, fn_s(1), fn_c(1), fn_r(1);
drop function fn_s;
drop function fn_c;
drop function fn_r;

-- case: or_replace_and_drop
create function fn_f() returns int language sql as 'select 1';
select fn_f();
create function fn_f() returns int language sql as 'select 2';
create or replace function fn_f() returns int language sql as 'select 3';
select fn_f();
create or replace function fn_f() returns text language sql as $$ select 'x' $$;
drop function fn_f();
select fn_f();
drop function fn_f();
drop function if exists fn_f();
drop function if exists fn_nosuch;
create function fn_g(a int) returns int language sql as 'select a';
create function fn_g(a text) returns text language sql as 'select a';
drop function fn_g;
drop function fn_g(int);
drop function fn_g;
select fn_g('t');
drop function fn_g;

-- case: setof_in_from
create function fn_evens(n int) returns setof int language sql as $$ select g * 2 from generate_series(1, n) g $$;
select * from fn_evens(3);
select e.x from fn_evens(2) as e(x);
select sum(fn_evens) from fn_evens(10);
create table fn_pets (id int, name text, kind text);
insert into fn_pets values (1, 'rex', 'dog'), (2, 'tom', 'cat'), (3, 'fido', 'dog');
create function fn_pets_of(k text) returns setof text language sql stable as $$ select name from fn_pets where kind = k order by id $$;
select * from fn_pets_of('dog');
select count(*) from fn_pets_of('bird');
drop function fn_evens;
drop function fn_pets_of;
drop table fn_pets;

-- case: errors
select fn_nosuch(1);
select fn_nosuch();
create function fn_bad() returns int language klingon as 'x';
create function fn_e(a int default 1, b int) returns int language sql as 'select 1';

-- case: recursion
create function fn_fact(n int) returns numeric language sql as 'select case when n <= 1 then 1::numeric else n * fn_fact(n - 1) end';
select fn_fact(1), fn_fact(5), fn_fact(20);
create function fn_inf(n int) returns int language sql as 'select fn_inf(n + 1)';
\set VERBOSITY terse
select fn_inf(1);
select 1 as still_alive;
\set VERBOSITY verbose
drop function fn_fact;
drop function fn_inf;

-- case: returns_table_and_out_parameters
create function fn_squares(n int) returns table(i int, sq int) language sql as 'select g, g*g from generate_series(1,n) g';
select * from fn_squares(3);
select * from fn_squares(2) as x(a);
select x.* from fn_squares(2) as x(a, b);
select s.sq from fn_squares(4) s where s.i > 2;
create function fn_one_col() returns table(i int) language sql as 'select g from generate_series(1,2) g';
select * from fn_one_col() as z;
create function fn_widen() returns table(i int8) language sql as 'select 1::int4';
select i, pg_typeof(i) from fn_widen();
create function fn_to_text() returns table(i int, s text) language sql as 'select 1, 2';
select * from fn_to_text();
create function fn_outs(out a int, out b text) language sql as 'select 1, ''x''';
select * from fn_outs();
create function fn_out_set(x int, out a int, out b text) returns setof record language sql as 'select x, ''x'' union all select x + 1, ''y''';
select * from fn_out_set(5);
create function fn_one_out(x int, out doubled int) language sql as 'select x * 2';
select fn_one_out(21), * from fn_one_out(4);
create function fn_void() returns void language sql as 'select 1';
select fn_void() is null;
create function fn_rec() returns record language sql as 'select 1, 2';
select * from fn_rec();
create function fn_few() returns table(i int, s text) language sql as 'select 1';
create function fn_many() returns table(i int) language sql as 'select 1, 2';
create function fn_badtype() returns table(i int, d date) language sql as 'select 1, true';
create function fn_outret(out a int, out b text) returns int language sql as 'select 1, ''x''';
create function fn_outret1(out a int) returns text language sql as 'select 1';
drop function fn_squares, fn_one_col, fn_widen, fn_to_text, fn_outs, fn_out_set, fn_one_out, fn_void, fn_rec;

-- case: sql_standard_return_body
create function fn_ret(a int) returns int language sql return a + 1;
select fn_ret(1);
create function fn_ret2(a text) returns text return upper(a) || '!';
select fn_ret2('hi');
create function fn_ret3(a int) returns int language plpgsql return a;
create function fn_ret4(a int) returns table(x int, y int) language sql return a;
drop function fn_ret, fn_ret2;
-- case: alter_function_attributes_and_rename
create function af_a(int) returns int language sql as $$ select $1 + 1 $$;
create function af_a(text) returns text language sql as $$ select $1 || 'x' $$;
create function af_b(int) returns int language sql immutable as $$ select $1 * 2 $$;
alter function af_b(int) stable;
alter function af_b(int) volatile strict leakproof;
alter function af_b(int) not leakproof called on null input parallel safe cost 10;
alter function af_b(int) returns null on null input;
alter function af_b strict;
alter function af_a strict;
alter function af_nope(int) stable;
alter function af_nope stable;
alter function af_b(int) rename to af_c;
select af_c(2), af_c(null);
select af_b(2);
alter function af_c(int) rename to af_a;
alter function af_c(int) security invoker;
drop function af_c(int);
drop function af_a(int);
drop function af_a(text);
create function af_t() returns trigger language plpgsql as $$ begin new.x := 5; return new; end $$;
create table af_tab (x int);
create trigger af_trg before insert on af_tab for each row execute function af_t();
alter function af_t() rename to af_t2;
insert into af_tab values (1);
select * from af_tab;
drop function af_t2();
drop table af_tab;
drop function af_t2();
-- case: begin_atomic_and_multi_statement_sql_bodies
CREATE FUNCTION at_s1(a text, b date) RETURNS boolean LANGUAGE sql RETURN a = 'abcd' AND b > '2001-01-01';
CREATE FUNCTION at_s3a() RETURNS boolean BEGIN ATOMIC ;;RETURN false;; END;
CREATE FUNCTION at_s10(a text, b date) RETURNS boolean LANGUAGE SQL BEGIN ATOMIC SELECT a = 'abcd' AND b > '2001-01-01'; END;
CREATE FUNCTION at_s13() RETURNS boolean BEGIN ATOMIC SELECT 1; SELECT false; END;
create function at_m(n int) returns int language sql as $$ select 1; select n * 2 $$;
create function at_case(x int) returns text begin atomic select case when x > 0 then 'pos' else 'neg' end; end;
create function at_setof(n int) returns setof int begin atomic select 0; select g from generate_series(1, n) g; end;
create function at_void() returns void language sql as $$ $$;
create function at_empty() returns int language sql as $$ $$;
create function at_bad() returns int begin atomic select 'x'::text; end;
create function at_plpgsql() returns int language plpgsql begin atomic select 1; end;
select at_s1('abcd', '2020-01-01'), at_s3a(), at_s10('abcd', '2020-01-01'), at_s13(), at_m(21), at_case(3), at_case(-1), at_void() is null;
select at_setof(3);
select * from at_setof(2);
drop function at_s1(text, date); drop function at_s3a(); drop function at_s10(text, date); drop function at_s13(); drop function at_m(int); drop function at_case(int); drop function at_setof(int); drop function at_void();
create function at_tab(n int) returns table(a int, b text) language sql as $$ select 1, 'x'; select g, 'v' || g from generate_series(1, n) g $$;
select * from at_tab(2);
select * from at_tab(0);
drop function at_tab(int);

-- case: sql_bodies_that_write
-- INSERT, UPDATE and DELETE in SQL function bodies: RETURNING as the result, each statement
-- seeing the ones before it, defaults and named parameters, errors with their CONTEXT, a
-- write in a STABLE function refused when it first runs, a rolled-back call.
create table sqlw (id serial primary key, name text not null, n int default 0);
create function sqlw_add(p_name text) returns int language sql as $$
  insert into sqlw (name) values (p_name) returning id
$$;
select sqlw_add('a'), sqlw_add('b');
select * from sqlw order by id;
create function sqlw_bump(p_id int, by int default 1) returns int language sql as $$
  update sqlw set n = n + by where id = p_id;
  select n from sqlw where id = p_id;
$$;
select sqlw_bump(1), sqlw_bump(1, 5), sqlw_bump(2);
create function sqlw_clear() returns void language sql as $$ delete from sqlw where n = 0 $$;
select sqlw_clear();
select * from sqlw order by id;
create function sqlw_ids(k int) returns setof int language sql as $$
  insert into sqlw (name, n) select 'x' || g, g from generate_series(1, k) g returning id
$$;
select * from sqlw_ids(3);
select sqlw_ids(2);
select count(*) from sqlw;
create function sqlw_noret() returns int language sql as $$ insert into sqlw (name) values ('z') $$;
create function sqlw_stable() returns int stable language sql as $$ insert into sqlw (name) values ('s') returning id $$;
select sqlw_stable();
create function sqlw_bad(p text) returns int language sql as $$ insert into sqlw (name) values (p) returning id; $$;
select sqlw_bad(null);
select count(*) from sqlw;
begin;
select sqlw_add('in txn');
rollback;
select count(*) from sqlw;
create function sqlw_two() returns bigint language sql as $$
  insert into sqlw (name) values ('t1');
  insert into sqlw (name) values ('t2');
  select count(*) from sqlw where name like 't_';
$$;
select sqlw_two();
drop function sqlw_add, sqlw_bump, sqlw_clear, sqlw_ids, sqlw_stable, sqlw_bad, sqlw_two;
drop table sqlw;

-- case: table_row_type_results
-- RETURNS [SETOF] table: the table's columns as it is now, from SQL and PL/pgSQL bodies; DROP
-- TABLE refused while a function returns its row type, and CASCADE dropping the functions;
-- an unknown function in FROM.
create table rt_tbl (a int, b text);
insert into rt_tbl values (1, 'one'), (2, 'two'), (3, 'three');
create function rt_sql(k int) returns setof rt_tbl language sql as $$ select * from rt_tbl where a >= k order by a $$;
select * from rt_sql(2);
create function rt_one() returns rt_tbl language sql as $$ select * from rt_tbl order by a limit 1 $$;
select * from rt_one();
create function rt_pl() returns setof rt_tbl as '
DECLARE
	rec RECORD;
BEGIN
	FOR rec IN select * from rt_tbl LOOP
		RETURN NEXT rec;
	END LOOP;
	RETURN;
END;' language plpgsql;
select * from rt_pl();
create function rt_pl_row() returns setof rt_tbl as '
DECLARE
	row rt_tbl%ROWTYPE;
BEGIN
	FOR row IN select * from rt_tbl where a > 1 LOOP
		RETURN NEXT row;
	END LOOP;
	RETURN;
END;' language plpgsql;
select * from rt_pl_row();
create function rt_q() returns setof rt_tbl language plpgsql as $$ begin return query select * from rt_tbl where a < 3; end $$;
select * from rt_q();
create function rt_ins(x int) returns setof rt_tbl language sql as $$ insert into rt_tbl values (x, 'new') returning * $$;
select * from rt_ins(9);
select a, b from rt_sql(3) s where s.b like 't%';
create or replace function rt_one() returns int language sql as $$ select 1 $$;
drop table rt_tbl;
drop table rt_tbl cascade;
select * from rt_q();
create table rt_tbl (a int);
create function rt_only() returns rt_tbl language sql as $$ select 1 $$;
drop table rt_tbl cascade;
select * from nosuchfn(1, 'a');

create table rt2 (a int);
insert into rt2 values (1);
create function rt2_f() returns setof rt2 language sql as $$ select * from rt2 $$;
create function rt2_p() returns setof rt2 language plpgsql as $$ begin return query select * from rt2; end $$;
select * from rt2_f();
select * from rt2_p();
alter table rt2 add column b text;
update rt2 set b = 'x';
select * from rt2_f();
select * from rt2_p();
drop table rt2 cascade;
