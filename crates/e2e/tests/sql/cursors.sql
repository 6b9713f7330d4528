-- Cursors: DECLARE [SCROLL | NO SCROLL] CURSOR [WITH HOLD], FETCH and MOVE in every
-- direction, CLOSE [ALL], with PostgreSQL's tags and errors; PL/pgSQL's bound and unbound
-- cursors (OPEN, FETCH ... INTO, MOVE, CLOSE, FOR over a bound cursor, arguments), functions
-- that return a refcursor the client then fetches from. Each "-- case:" block runs in its
-- own psql session on keel and on PostgreSQL 15.

-- case: sql_cursors
create table cur_t as select g as a, 'r' || g as b from generate_series(1, 10) g;
declare c cursor for select * from cur_t;
begin;
declare c scroll cursor for select * from cur_t order by a;
fetch c;
fetch 2 from c;
fetch next in c;
fetch prior from c;
fetch relative 2 from c;
fetch relative -1 from c;
fetch absolute 9 from c;
fetch forward all from c;
fetch c;
fetch backward 3 from c;
fetch last from c;
fetch first from c;
move forward 3 in c;
fetch c;
move all in c;
move backward all in c;
fetch absolute -3 from c;
fetch backward all from c;
fetch 0 from c;
fetch forward -2 from c;
declare c cursor for select 1;
declare d no scroll cursor for select a from cur_t where a < 4;
fetch d;
fetch prior d;
rollback;
begin;
declare d no scroll cursor for select a from cur_t where a < 4;
fetch all d;
fetch nosuch;
rollback;
begin;
declare e cursor for select a, b from cur_t where a > 8;
close e;
fetch e;
close e;
rollback;
declare h cursor with hold for select a from cur_t where a between 3 and 5;
fetch h;
fetch h;
close all;
fetch h;
begin;
declare x cursor for select nosuch from cur_t;
rollback;
begin;
declare y cursor for insert into cur_t values (1);
rollback;

-- case: plpgsql_cursors
create table rc_test (a int, b int);
insert into rc_test select g, g * 10 from generate_series(1, 6) g;
create function refcursor_test1(refcursor) returns refcursor as $$
begin
    open $1 for select * from rc_test;
    return $1;
end
$$ language plpgsql;
begin;
select refcursor_test1('test1');
fetch next in test1;
select refcursor_test1('test2');
fetch all from test2;
commit;
fetch next from test1;
create function return_unnamed_refcursor() returns refcursor as $$
declare
    rc refcursor;
begin
    open rc for select a from rc_test;
    return rc;
end
$$ language plpgsql;
create function use_refcursor(rc refcursor) returns int as $$
declare
    rc refcursor;
    x record;
begin
    rc := return_unnamed_refcursor();
    fetch next from rc into x;
    return x.a;
end
$$ language plpgsql;
select use_refcursor(return_unnamed_refcursor());
create function refcursor_test2(int, int) returns boolean as $$
declare
    c1 cursor (param1 int, param2 int) for select * from rc_test where a > param1 and b > param2;
    nonsense record;
begin
    open c1($1, $2);
    fetch c1 into nonsense;
    close c1;
    if found then
        return true;
    else
        return false;
    end if;
end
$$ language plpgsql;
select refcursor_test2(20000, 20000) as "Should be false",
       refcursor_test2(2, 2) as "Should be true";
do $$
declare
  c cursor for select a, b from rc_test order by a;
  r record;
  n int := 0;
begin
  for r in c loop
    n := n + r.b;
  end loop;
  raise notice 'sum %', n;
  open c;
  move forward 2 in c;
  fetch c into r;
  raise notice 'third % found %', r.a, found;
  move last in c;
  fetch prior from c into r;
  raise notice 'prior % %', r.a, r.b;
  close c;
end $$;
do $$
declare c refcursor;
begin
  close c;
end $$;
do $$
declare c no scroll cursor for select 1;
declare x int;
begin
  open c;
  fetch c into x;
  fetch prior from c into x;
end $$;

-- case: rows_past_work_mem
set work_mem = '64kB';
begin;
declare big scroll cursor for select g, repeat('x', 200) || g as pad from generate_series(1, 5000) g;
fetch absolute 4000 from big;
fetch backward 2 from big;
move last in big;
fetch prior from big;
fetch absolute 3 from big;
move forward all in big;
fetch relative -4999 from big;
commit;

-- case: named_cursor_arguments
create table nca_t (a int, b int);
insert into nca_t select g, g * 10 from generate_series(1, 30) g;
create function nca_f(int, int) returns int as $$
declare
    c1 cursor (param1 int, param2 int) for select count(*) from nca_t where a > param1 and b > param2;
    n int;
begin
    open c1(param2 := $2, param1 := $1);
    fetch c1 into n;
    close c1;
    open c1(param1 := $1, $2);
    fetch c1 into n;
    close c1;
    open c1 ($1 -- a comment
      , $2);
    fetch c1 into n;
    return n;
end
$$ language plpgsql;
select nca_f(5, 100);
create function nca_g() returns int as $$
declare
    c1 cursor (p1 int, p2 int) for select count(*) from nca_t where a > p1 and b > p2;
begin
    open c1(p2 := 20, 21);
    return 0;
end
$$ language plpgsql;
select nca_g();
create function nca_h(p1 int) returns int as $$
declare
  c1 cursor (p1 int, p2 int) for select count(*) from nca_t where a > p1 and b > p2;
  p2 int := 50;
  n int;
begin
  open c1 (p1 := p1, p2 := p2);
  fetch c1 into n;
  return n;
end $$ language plpgsql;
select nca_h(3);

-- case: cursors_and_savepoints
create table cs_t (a int);
insert into cs_t values (1), (2);
begin;
declare outer_c cursor for select a from cs_t;
savepoint s1;
declare inner_c cursor for select a from cs_t;
rollback to savepoint s1;
fetch outer_c;
savepoint s2;
declare rel_c cursor for select a from cs_t;
release savepoint s2;
savepoint s3;
rollback to savepoint s3;
fetch rel_c;
fetch inner_c;
rollback;
declare h cursor with hold for select a from cs_t order by a;
begin;
rollback;
fetch h;
begin;
do $$
declare c refcursor := 'exc_c';
begin
  begin
    open c for select a from cs_t;
    raise exception 'boom';
  exception when others then
    raise notice 'caught';
  end;
end $$;
fetch exc_c;
rollback;
begin;
do $$
declare c refcursor := 'kept_c';
begin
  begin
    open c for select a from cs_t order by a;
  exception when others then
    raise notice 'not reached';
  end;
end $$;
fetch kept_c;
commit;
fetch h;
close h;
