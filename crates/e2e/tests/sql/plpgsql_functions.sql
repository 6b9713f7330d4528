-- LANGUAGE plpgsql functions called from queries: arguments by name and by $n, RETURN, the
-- caller's snapshot kept while the function writes, lookups and updates per call, exception
-- blocks inside a call, RAISE from inside a scan, errors with their CONTEXT lines, STRICT,
-- defaults and overloading. Each "-- case:" block runs in its own psql session on keel and
-- on PostgreSQL 15.

-- case: scalar_calls
create function plf_add1(x int) returns int language plpgsql as $$ begin return x + 1; end $$;
create function plf_mul(int, int) returns int language plpgsql as $$ begin return $1 * $2; end $$;
create function plf_greet(who text default 'world', punct text default '!') returns text
language plpgsql as $$ begin return 'hello ' || who || punct; end $$;
select plf_add1(41), plf_mul(6, 7), plf_greet(), plf_greet('you'), plf_greet(punct => '?');
select plf_add1(g) from generate_series(1, 5) g where plf_add1(g) % 2 = 0;
select plf_add1(null), plf_mul(2, null);
create function plf_half(x numeric) returns numeric language plpgsql as $$ begin return x / 2; end $$;
create function plf_half(x text) returns text language plpgsql as $$ begin return left(x, length(x) / 2); end $$;
select plf_half(7), plf_half('abcdef');
create function plf_strict_len(t text) returns int language plpgsql strict as $$ begin raise notice 'called'; return length(t); end $$;
select plf_strict_len(null), plf_strict_len('abc');
create function plf_as_int(t text) returns int language plpgsql as $$ begin return t; end $$;
select plf_as_int('42');
select plf_as_int('4x2');
create function plf_nothing(x int) returns void language plpgsql as $$ begin perform x; end $$;
select plf_nothing(1);
create function plf_fall_off(x int) returns int language plpgsql as $$ begin x := x + 1; end $$;
select plf_fall_off(1);

-- case: lookups_and_updates
create table plf_acct (id int primary key, bal int not null, owner text);
insert into plf_acct select g, 100, 'o' || g from generate_series(1, 10) g;
create function plf_transfer(src int, dst int, amt int) returns int language plpgsql as $$
declare
  a int; b int;
begin
  select bal into a from plf_acct where id = src;
  select bal into b from plf_acct where id = dst;
  if a < amt then
    raise exception 'insufficient funds in %: % < %', src, a, amt using errcode = 'check_violation';
  end if;
  update plf_acct set bal = bal - amt where id = src;
  update plf_acct set bal = bal + amt where id = dst;
  return a + b;
end $$;
select plf_transfer(1, 2, 30);
select plf_transfer(3, 4, 30), plf_transfer(4, 5, 20);
select id, bal from plf_acct where id <= 5 order by id;
select plf_transfer(1, 2, 1000);
select sum(bal) from plf_acct;
begin;
select plf_transfer(6, 7, 50);
rollback;
select id, bal from plf_acct where id in (6, 7) order by id;

-- case: caller_snapshot
create table plf_t (id int, v int);
insert into plf_t values (1, 10), (2, 20), (3, 30);
create function plf_bump(k int) returns int language plpgsql as $$
declare n int;
begin
  update plf_t set v = v + 100 where id = k;
  select count(*) into n from plf_t where v > 100;
  return n;
end $$;
-- Each call sees the updates of the calls before it; the scan that calls it does not.
select id, v, plf_bump(id) from plf_t order by id;
select * from plf_t order by id;
create function plf_insert_more(k int) returns int language plpgsql as $$
begin
  insert into plf_t values (k + 10, 0);
  return k;
end $$;
select count(*), sum(plf_insert_more(id)) from plf_t;
select count(*) from plf_t;
update plf_t set v = plf_bump(id) where id = 1;
select * from plf_t order by id;

-- case: exceptions_inside_calls
create table plf_u (id int primary key);
create function plf_try_insert(k int) returns text language plpgsql as $$
begin
  insert into plf_u values (k);
  insert into plf_u values (k + 1000);
  if k % 2 = 0 then
    raise exception 'even %', k;
  end if;
  return 'ok ' || k;
exception
  when unique_violation then return 'dup ' || k;
  when raise_exception then return 'rolled back: ' || sqlerrm;
end $$;
select plf_try_insert(1), plf_try_insert(2), plf_try_insert(1), plf_try_insert(3);
select * from plf_u order by id;
create function plf_divide(a int, b int) returns int language plpgsql as $$
begin
  return a / b;
exception when division_by_zero then
  raise notice 'caught %', sqlstate;
  return null;
end $$;
select plf_divide(10, 2), plf_divide(1, 0);

-- case: errors_and_context
create table plf_w (id int primary key);
create function plf_boom(n int) returns int language plpgsql as $$
begin
  raise exception 'boom %', n using detail = 'the detail', hint = 'the hint';
end $$;
\set VERBOSITY verbose
select plf_boom(7);
create function plf_div0(n int) returns int language plpgsql as $$
begin
  return 10 / n;
end $$;
select plf_div0(0);
create function plf_dup(n int) returns int language plpgsql as $$
begin
  insert into plf_w values (n);
  insert into plf_w values (n);
  return n;
end $$;
select plf_dup(1);
select count(*) from plf_w;
create function plf_outer_fn(n int) returns int language plpgsql as $$
begin
  return plf_boom(n) + 1;
end $$;
select plf_outer_fn(3);
create function plf_bad_col() returns int language plpgsql as $$
declare r int;
begin
  select nosuch into r from plf_w;
  return r;
end $$;
select plf_bad_col();
create function plf_strict_into(n int) returns int language plpgsql as $$
declare r int;
begin
  select id into strict r from plf_w where id > n;
  return r;
end $$;
insert into plf_w values (5), (6);
select plf_strict_into(5);
select plf_strict_into(4);
select plf_strict_into(6);
create function plf_stable_write() returns int stable language plpgsql as $$
begin
  delete from plf_w;
  return 1;
end $$;
select plf_stable_write();

-- case: control_flow
create function plf_fib(n int) returns bigint language plpgsql as $$
declare a bigint := 0; b bigint := 1; t bigint;
begin
  for i in 1..n loop
    t := a + b; a := b; b := t;
  end loop;
  return a;
end $$;
select n, plf_fib(n) from generate_series(0, 10) n;
create function plf_fact(n int) returns numeric language plpgsql as $$
begin
  if n <= 1 then return 1; end if;
  return n * plf_fact(n - 1);
end $$;
select plf_fact(30);
create function plf_classify(x int) returns text language plpgsql as $$
begin
  case
    when x < 0 then return 'negative';
    when x = 0 then return 'zero';
    else return 'positive';
  end case;
end $$;
select plf_classify(-5), plf_classify(0), plf_classify(5);
create function plf_sum_array(a int[]) returns int language plpgsql as $$
declare s int := 0; x int;
begin
  foreach x in array a loop
    s := s + x;
  end loop;
  return s;
end $$;
select plf_sum_array(array[1, 2, 3, 4]);
create function plf_count_rows(tbl text) returns bigint language plpgsql as $$
declare n bigint;
begin
  execute format('select count(*) from %I', tbl) into n;
  return n;
end $$;
create table plf_cr (x int);
insert into plf_cr select generate_series(1, 7);
select plf_count_rows('plf_cr');
create function plf_loud(x int) returns int language plpgsql as $$
begin
  raise notice 'row %', x;
  return x;
end $$;
select plf_loud(x) from plf_cr where x <= 3 order by x;

-- case: void_results
create function plf_v() returns void language plpgsql as $$ begin end $$;
create function plf_vs() returns void language sql as 'select 1';
\pset null (null)
select plf_v(), plf_v() is null, plf_vs(), plf_vs() is null;

-- case: set_returning_in_from
create table srff_t (id int primary key, name text, score int);
insert into srff_t values (1, 'a', 10), (2, 'b', 20), (3, 'c', 30);
create function srff_ints(n int) returns setof int language plpgsql as $$
begin
  for i in 1..n loop
    return next i * 10;
  end loop;
  return;
end $$;
select * from srff_ints(3);
select s, s + 1 as t from srff_ints(4) s where s > 10 order by s desc;
select count(*) from srff_ints(0);
create function srff_rows(min_score int) returns table (id int, label text) language plpgsql as $$
begin
  return query select t.id, t.name || '!' from srff_t t where t.score >= min_score order by t.id;
  id := 99; label := 'extra';
  return next;
end $$;
select * from srff_rows(20);
select r.label from srff_rows(0) r order by r.id;
create function srff_out(x int, out doubled int, out label text) language plpgsql as $$
begin
  doubled := x * 2;
  label := 'x' || x;
end $$;
select * from srff_out(21);
select doubled from srff_out(5);
create function srff_one(x int) returns int language plpgsql as $$ begin return x + 1; end $$;
select * from srff_one(41);
select * from srff_one(41) as v(val);
create function srff_bad() returns setof int language plpgsql as $$
begin
  return query select 'x'::text;
end $$;
select * from srff_bad();
create function srff_bad2() returns setof int language plpgsql as $$
begin
  return query select 1, 2;
end $$;
select * from srff_bad2();
create function srff_strict(x int) returns setof int language plpgsql strict as $$ begin return next x; end $$;
select * from srff_strict(null);
select * from srff_strict(7);
create function srff_scalar_strict(x int) returns int language plpgsql strict as $$ begin return x; end $$;
select * from srff_scalar_strict(null);
create function srff_writes(k int) returns setof int language plpgsql as $$
begin
  update srff_t set score = score + k returning score into k;
  return next k;
  return query select score from srff_t order by id;
end $$;
select * from srff_writes(1);
select * from srff_t order by id;

-- case: rowtype_and_type_of_variables
create table rt_t (id int primary key, name varchar(5), score numeric(6,2));
insert into rt_t values (1, 'ann', 1.5), (2, 'bob', 2.25);
create function rt_get(k int) returns text language plpgsql as $$
declare
  r rt_t%rowtype;
  n rt_t.name%type;
  m n%type;
begin
  select * into r from rt_t where id = k;
  n := r.name;
  m := n || '!';
  r.score := r.score * 2;
  return r.id || ':' || r.name || ':' || r.score || ':' || m;
end $$;
select rt_get(1), rt_get(2), rt_get(3);
do $$
declare r rt_t%rowtype;
begin
  r.id := 7; r.name := 'zed';
  raise notice 'r: % % %', r.id, r.name, r.score;
  r.name := 'toolongname';
end $$;

-- case: alias_declarations_and_postfix_isnull
create function al_pair(int, text) returns text language plpgsql as $$
declare
  n alias for $1;
  label alias for $2;
begin
  declare
    inner_n alias for n;
  begin
    inner_n := inner_n * 10;
  end;
  if label isnull then
    return 'none:' || n;
  end if;
  return label || ':' || $1;
end $$;
select al_pair(4, 'x'), al_pair(5, null);
select 1 isnull, null isnull, 2 notnull, (1 + null) isnull as sum_isnull;
create table al_t (id int primary key, note text);
create function al_fill() returns trigger language plpgsql as $$
declare r alias for new;
begin
  if r.note isnull then
    r.note := 'filled';
  end if;
  return r;
end $$;
create trigger al_fill before insert on al_t for each row execute function al_fill();
insert into al_t values (1, null), (2, 'kept');
select * from al_t order by id;

-- case: bare_raise_rethrows_the_caught_error
create table rr_t (id int primary key);
create function rr_insert(k int) returns text language plpgsql as $$
begin
  begin
    insert into rr_t values (k);
    insert into rr_t values (k);
  exception when unique_violation then
    raise notice 'caught %', sqlstate;
    raise;
  end;
  return 'unreachable';
end $$;
select rr_insert(1);
select count(*) from rr_t;
create function rr_outer() returns text language plpgsql as $$
begin
  perform rr_insert(2);
  return 'no';
exception when others then
  return 'outer caught ' || sqlstate || ': ' || sqlerrm;
end $$;
select rr_outer();
do $$ begin raise; end $$;
do $$
begin
  begin
    perform 1 / 0;
  exception when division_by_zero then
    begin
      raise exception 'inner';
    exception when others then
      null;
    end;
    raise;
  end;
end $$;
-- case: array_element_assignment_and_stacked_diagnostics
do $$ declare a int[] := array[1,2,3]; begin a[2] := 20; a[5] := 50; raise notice '%', a; end $$;
do $$ declare a int[]; begin a[1:2] := array[7,8]; raise notice '%', a; end $$;
do $$ begin begin perform 1/0; exception when others then declare s text; m text; begin get stacked diagnostics s = returned_sqlstate, m = message_text; raise notice '% %', s, m; end; end; end $$;
do $$ declare a int[]; begin a[3] := 30; raise notice '%', a; a[1] := 10; raise notice '% %', a, array_lower(a,1); end $$;
do $$ declare a int[] := '{{1,2},{3,4}}'; begin a[2][1] := 30; raise notice '%', a; a[3][1] := 5; end $$;
do $$ declare a text[] := '{x,y}'; i int := null; begin a[i] := 'z'; end $$;
do $$ declare a int[] := '{1,2,3,4}'; begin a[2:3] := '{20,30}'; raise notice '%', a; a[:2] := array[7,8]; raise notice '%', a; a[1] := '5'; a[2] := 2.6; raise notice '%', a; end $$;
do $$ declare x int := 1; begin x[1] := 2; end $$;
do $$ declare a int[] := '{1,2}'; begin a[1::int + 1] := 9; a[(select 1)] := 8; raise notice '%', a; end $$;
do $$ begin get stacked diagnostics; end $$;
do $$ declare t text; begin get stacked diagnostics t = message_text; end $$;
create table gd_diag (a int primary key, b int not null check (b > 0));
do $$ declare s text; m text; d text; h text; c text; tb text; cn text; col text; sc text; dt text; begin
  insert into gd_diag values (1, 1); insert into gd_diag values (1, 1);
exception when unique_violation then
  get stacked diagnostics s = returned_sqlstate, m = message_text, d = pg_exception_detail, h = pg_exception_hint, tb = table_name, cn = constraint_name, col = column_name, sc = schema_name, dt = pg_datatype_name;
  raise notice '[%] [%] [%] [%] [%] [%] [%] [%] [%]', s, m, d, h, tb, cn, col, sc, dt;
end $$;
do $$ declare s text; m text; col text; tb text; begin
  insert into gd_diag values (2, null);
exception when others then
  get stacked diagnostics s = returned_sqlstate, m = message_text, col = column_name, tb = table_name;
  raise notice '[%] [%] [%] [%]', s, m, col, tb;
end $$;
do $$ declare c text; begin
  perform 1/0;
exception when others then
  get stacked diagnostics c = pg_exception_context;
  raise notice 'ctx: %', c;
end $$;
create function gd_f() returns int language plpgsql as $$ begin raise exception 'boom' using hint = 'hh', detail = 'dd', errcode = 'P0009'; end $$;
do $$ declare c text; s text; d text; h text; begin
  perform gd_f();
exception when others then
  get stacked diagnostics c = pg_exception_context, s = returned_sqlstate, d = pg_exception_detail, h = pg_exception_hint;
  raise notice '% % % ctx: %', s, d, h, c;
end $$;
drop table gd_diag;
drop function gd_f();

-- case: body_checked_at_create
-- Embedded SQL and RETURN are checked when the function is created, with the position of
-- the error in the CREATE statement (dollar- or single-quoted body), and before a DO runs.
create function plf_bad_sql() returns int as $$
declare a int;
begin
    a := 5;
    Johnny Yuma;
    return a;
end$$ language plpgsql;
create function plf_bad_loop() returns int as $$ declare r record; begin
    for r in select I fought the law, the law won LOOP
        raise notice 'in loop';
    end loop;
    return 5;
end;$$ language plpgsql;
create function plf_bad_default() returns int as $$ declare x int := 1 +; begin return x; end$$ language plpgsql;
create function plf_bad_quoted() returns int as 'begin return 1 + ''a'' frm x; end' language plpgsql;
create function plf_alias_ok() returns text as 'begin return ''a'' frm; end' language plpgsql;
select plf_alias_ok();
create function plf_ret_void() returns void as $$ begin return 5; end $$ language plpgsql;
create function plf_ret_set() returns setof int as $$ begin return 5; end $$ language plpgsql;
create function plf_ret_next() returns int as $$ begin return next 5; end $$ language plpgsql;
create function plf_ret_query() returns int as $$ begin return query select 1; end $$ language plpgsql;
create function plf_ret_out(out a int) as $$ begin return 5; end $$ language plpgsql;
create function plf_next_out(out a int) returns setof int as $$ begin return next 5; end $$ language plpgsql;
create function plf_next_empty() returns setof int as $$ begin return next; end $$ language plpgsql;
create function plf_ret_empty() returns trigger as $$ begin return; end $$ language plpgsql;
create function plf_current_of() returns void as $$ begin update plf_nothere set a = 1 where current of c; end $$ language plpgsql;
drop function plf_current_of();
create function plf_rowtext() returns trigger language plpgsql as $$ begin raise notice 'row %', new.*::text; return new; end $$;
drop function plf_rowtext();
do $$ begin perform 1 +; end $$;
do $$ begin raise notice 'x %', 1 +; end $$;
do $$ begin for i in 1..2 + loop null; end loop; end $$;
do $$ begin return 1; end $$;
do $$ declare x int; begin x := ; end $$;
create function plf_sql_bad() returns int as $$ select 1;
 selec 1 $$ language sql;
create function plf_sql_nocol(int) returns int as $$ select 1; select $1 + nocol from (select 1) s $$ language sql;
create table plf_moved (a int);
create function plf_reads_a() returns int as 'select 1; select a from plf_moved' language sql;
drop table plf_moved;
create table plf_moved (b int);
select plf_reads_a();
select * from plf_reads_a();
select 1 + plf_reads_a();
drop function plf_reads_a();
drop table plf_moved;

-- case: variable_conflict
-- A variable that is also a column in scope: 42702 by default, the variable or the column
-- under #variable_conflict; error positions point into the statement as written.
create table vc_t (q1 bigint, q2 bigint);
insert into vc_t values (123, 456), (4567, 89);
create function vc_default() returns setof vc_t as $$
declare r record;
  q1 bigint := 42;
begin
  for r in select q1,q2 from vc_t loop
    return next r;
  end loop;
end;
$$ language plpgsql;
select * from vc_default();
create function vc_var() returns setof vc_t as $$
#variable_conflict use_variable
declare r record;
  q1 bigint := 42;
begin
  for r in select q1,q2 from vc_t loop
    return next r;
  end loop;
end;
$$ language plpgsql;
select * from vc_var();
create function vc_col() returns setof vc_t as $$
#variable_conflict use_column
declare r record;
  q1 bigint := 42;
begin
  for r in select q1,q2 from vc_t loop
    return next r;
  end loop;
end;
$$ language plpgsql;
select * from vc_col();
create function vc_update(q1 bigint) returns int language plpgsql as $$
begin
  insert into vc_t values (q1, 1);
  update vc_t set q2 = q2 + 1 where q1 = 5;
  return 1;
end $$;
select vc_update(123);
select * from vc_t order by 1, 2;
do $$ declare q2 int := 7; begin perform count(*) from vc_t where q2 > 1; end $$;
do $$ declare n int := 7; k int; begin select count(*) into k from vc_t where q2 > n; raise notice '%', k; end $$;
drop table vc_t cascade;

-- case: label_qualified_variables
-- fname.param and <<label>> block.var, read and assigned; an expression's error shows the
-- expression as written.
create table lq_t (q1 bigint, q2 bigint);
insert into lq_t values (123, 456), (4567, 89);
create function lq_update(q1 bigint) returns int language plpgsql as $$
begin
  update lq_t set q2 = 0 where lq_t.q1 = lq_update.q1;
  return lq_update.q1 + 1;
end $$;
select lq_update(123);
select * from lq_t order by 1;
do $$
<<blk>>
declare x int := 1;
begin
  declare x int := 2;
  begin
    raise notice 'inner %, outer %', x, blk.x;
    blk.x := 10;
    raise notice 'outer now %', blk.x;
  end;
end $$;
create function lq_rec() returns int language plpgsql as $$
declare r record;
begin
  select 5 as v into r;
  return r.v + lq_rec.r_missing;
end $$;
select lq_rec();
drop table lq_t cascade;
drop function lq_update(bigint);
drop function lq_rec();

-- case: raise_options
-- RAISE: an option given twice, a NULL option, the message when none is given (the
-- condition's name, else the SQLSTATE), and COLUMN / CONSTRAINT / DATATYPE / TABLE / SCHEMA.
create function rz_code() returns void as $$
begin
  raise exception using errcode = '1234F';
end $$ language plpgsql;
select rz_code();
create or replace function rz_code() returns void as $$
begin
  raise notice 'x' using message = 'custom message';
end $$ language plpgsql;
select rz_code();
create or replace function rz_code() returns void as $$
begin
  raise division_by_zero using errcode = '22012';
end $$ language plpgsql;
select rz_code();
create or replace function rz_code() returns void as $$
begin
  raise using message = 'custom' || ' message', errcode = '22012';
end $$ language plpgsql;
select rz_code();
create or replace function rz_code() returns void as $$
begin
  raise sqlstate '22012';
end $$ language plpgsql;
select rz_code();
create or replace function rz_code() returns void as $$
begin
  raise division_by_zero;
end $$ language plpgsql;
select rz_code();
create or replace function rz_code() returns void as $$
begin
  raise 'check %', 1 using detail = null;
end $$ language plpgsql;
select rz_code();
create or replace function rz_code() returns void as $$
declare _column_name text; _constraint_name text; _datatype_name text; _table_name text; _schema_name text;
begin
  begin
    raise exception using
      column = '>>some column name<<',
      constraint = '>>some constraint name<<',
      datatype = '>>some datatype name<<',
      table = '>>some table name<<',
      schema = '>>some schema name<<';
  exception when others then
    get stacked diagnostics
        _column_name = column_name,
        _constraint_name = constraint_name,
        _datatype_name = pg_datatype_name,
        _table_name = table_name,
        _schema_name = schema_name;
    raise notice 'column %, constraint %, type %, table %, schema %',
      _column_name, _constraint_name, _datatype_name, _table_name, _schema_name;
  end;
end $$ language plpgsql;
select rz_code();
create or replace function rz_code() returns void as $$
begin
  raise warning 'w' using hint = 'h', table = 't1';
end $$ language plpgsql;
select rz_code();
drop function rz_code();

-- case: found_after_loops_and_execute
do $$ declare j int; begin
  perform 1;
  execute 'select 1 where false'; raise notice 'after execute %', found;
  for i in 2..1 loop end loop; raise notice 'empty for %', found;
  for i in 1..2 loop end loop; raise notice 'for %', found;
  foreach j in array array[1] loop end loop; raise notice 'foreach %', found;
  foreach j in array '{}'::int[] loop end loop; raise notice 'empty foreach %', found;
  for i in reverse 1..2 loop exit; end loop; raise notice 'exited for %', found;
end $$;
create temp table fnd_t (f1 int, f2 int);
create function fnd_exec() returns void as $$
declare x record;
begin
  execute 'insert into fnd_t values (7,8),(9,10) returning *' into x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
  insert into fnd_t values (1,2),(3,4) returning * into x;
end$$ language plpgsql;
select fnd_exec();
select * from fnd_t order by f1;

-- case: unnamed_out_parameters
create function ocn1(out int, out b int) language sql as 'select 1, 2';
select * from ocn1();
create function ocn2(out int) language sql as 'select 1';
select * from ocn2();
create function ocn3(a int, out int, out text) language plpgsql as $$ begin $2 := a; $3 := a::text; end $$;
select * from ocn3(5);

-- case: extra_warnings_and_errors
-- PostgreSQL validates these settings once the plpgsql library is loaded in the session.
do $$ begin end $$;
set plpgsql.extra_warnings to 'all';
set plpgsql.extra_warnings to 'none';
set plpgsql.extra_warnings to 'shadowed_variables, bogus';
set plpgsql.extra_errors to 'all, too_many_rows';
set plpgsql.extra_errors to '';
show plpgsql.extra_errors;
set plpgsql.extra_warnings to 'shadowed_variables';
create or replace function xw_shadow(in1 int) returns table (out1 int) as $$
declare
in1 int;
out1 int;
begin
  declare
  in1 int;
  begin
    for found in 1..2 loop
      declare out1 int; begin end;
    end loop;
  end;
end
$$ language plpgsql;
select * from xw_shadow(1);
set plpgsql.extra_errors to 'shadowed_variables';
create or replace function xw_shadow2(f1 int) returns boolean as $$
declare f1 int; begin return 1; end $$ language plpgsql;
reset plpgsql.extra_errors;
reset plpgsql.extra_warnings;
create or replace function xw_shadow2(f1 int) returns boolean as $$
declare f1 int; begin return 1; end $$ language plpgsql;
set plpgsql.extra_warnings to 'too_many_rows';
do $$ declare x int; begin select v from generate_series(1,2) g(v) into x; raise notice 'x = %', x; end $$;
do $$ declare x int; begin execute 'select v from generate_series(1,2) g(v)' into x; end $$;
set plpgsql.extra_errors to 'too_many_rows';
do $$ declare x int; begin select v from generate_series(1,2) g(v) into x; end $$;
reset plpgsql.extra_errors;
reset plpgsql.extra_warnings;
set plpgsql.extra_warnings to 'strict_multi_assignment';
do $$ declare x int; y int; begin
  select 1 into x, y;
  select 1,2 into x, y;
  select 1,2,3 into x, y;
end $$;
set plpgsql.extra_errors to 'strict_multi_assignment';
do $$ declare x int; y int; begin select 1,2,3 into x, y; end $$;
reset plpgsql.extra_errors;
reset plpgsql.extra_warnings;
set plpgsql.check_asserts to off;
do $$ begin assert false, 'not checked'; raise notice 'asserts off'; end $$;
reset plpgsql.check_asserts;
set plpgsql.variable_conflict to use_column;
create temp table xw_conf (v int);
insert into xw_conf values (1), (2);
do $$ declare v int := 5; r int; begin select count(*) into r from xw_conf where v = v; raise notice 'r = %', r; end $$;
set plpgsql.variable_conflict to use_variable;
do $$ declare v int := 5; r int; begin select count(*) into r from xw_conf where v = v; raise notice 'r = %', r; end $$;
set plpgsql.variable_conflict to bogus;
reset plpgsql.variable_conflict;
do $$ declare v int := 5; r int; begin select count(*) into r from xw_conf where v = v; raise notice 'r = %', r; end $$;

-- case: print_strict_params
create temp table psp_foo (f1 int, f2 int); insert into psp_foo values (1,2),(3,4),(5,6),(7,8),(9,10);
set plpgsql.print_strict_params to true;

create or replace function psp_stricttest() returns void as $$
declare
x record;
p1 int := 2;
p3 text := 'psp_foo';
begin
  -- no rows
  select * from psp_foo where f1 = p1 and f1::text = p3 into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();

create or replace function psp_stricttest() returns void as $$
declare
x record;
p1 int := 2;
p3 text := $a$'Valame Dios!' dijo Sancho; 'no le dije yo a vuestra merced que mirase bien lo que hacia?'$a$;
begin
  -- no rows
  select * from psp_foo where f1 = p1 and f1::text = p3 into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();

create or replace function psp_stricttest() returns void as $$
declare
x record;
p1 int := 2;
p3 text := 'psp_foo';
begin
  -- too many rows
  select * from psp_foo where f1 > p1 or f1::text = p3  into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();

create or replace function psp_stricttest() returns void as $$
declare x record;
begin
  -- too many rows, no params
  select * from psp_foo where f1 > 3 into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();

create or replace function psp_stricttest() returns void as $$
declare x record;
begin
  -- no rows
  execute 'select * from psp_foo where f1 = $1 or f1::text = $2' using 0, 'psp_foo' into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();

create or replace function psp_stricttest() returns void as $$
declare x record;
begin
  -- too many rows
  execute 'select * from psp_foo where f1 > $1' using 1 into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();

create or replace function psp_stricttest() returns void as $$
declare x record;
begin
  -- too many rows, no parameters
  execute 'select * from psp_foo where f1 > 3' into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();

create or replace function psp_stricttest() returns void as $$
-- override the global
#print_strict_params off
declare
x record;
p1 int := 2;
p3 text := 'psp_foo';
begin
  -- too many rows
  select * from psp_foo where f1 > p1 or f1::text = p3  into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();

reset plpgsql.print_strict_params;

create or replace function psp_stricttest() returns void as $$
-- override the global
#print_strict_params on
declare
x record;
p1 int := 2;
p3 text := 'psp_foo';
begin
  -- too many rows
  select * from psp_foo where f1 > p1 or f1::text = p3  into strict x;
  raise notice 'x.f1 = %, x.f2 = %', x.f1, x.f2;
end$$ language plpgsql;

select psp_stricttest();
reset plpgsql.print_strict_params;

-- case: get_diagnostics_pg_context
create function ctx_inner(int) returns int language plpgsql as $$
declare s text;
begin
  get diagnostics s = pg_context;
  raise notice 'stack: %', s;
  begin
    perform 1 / 0;
  exception when division_by_zero then
    get diagnostics s = pg_context;
    raise notice 'in handler: %', s;
  end;
  return $1 * 2;
end $$;
create function ctx_outer(int) returns int language plpgsql as $$
declare r int;
begin
  r := ctx_inner($1);
  return r;
end $$;
select ctx_outer(5);
do $$ declare s text; begin get diagnostics s = pg_context; raise notice '%', s; end $$;
do $$ declare r int; begin r := ctx_outer(1); raise notice 'back: %', r; end $$;
