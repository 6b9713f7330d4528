-- PL/pgSQL DO blocks: the seed's partition-creating loop (on plain tables until partitioning
-- exists), declarations, control flow, queries with variables, FOR over a query, EXECUTE,
-- GET DIAGNOSTICS, FOUND, labels, RAISE and exception blocks that roll back to their start,
-- and the errors with their CONTEXT lines. Each "-- case:" block runs in its own psql
-- session on keel and on PostgreSQL 15.

-- case: seed_loop
do language plpgsql $$
declare
begin
for i in 0..1023 loop
execute format('create unlogged table sp_%s (id int primary key, info text, crt_time timestamp)', i);
end loop;
end;
$$;
insert into sp_0 values (1, 'a', '2024-01-01');
insert into sp_1023 values (2, 'b', '2024-01-02');
select * from sp_0 union all select * from sp_1023 order by id;
do $$ begin for i in 0..1023 loop execute format('drop table sp_%s', i); end loop; end $$;
select * from sp_5;

-- case: statements
do $$
declare x int := 5; s text; r record; n int := 0; c constant int := 7;
begin
  raise notice 'x is %, half %, c %', x, x / 2, c;
  if x > 3 then s := 'big'; elsif x > 1 then s := 'mid'; else s := 'small'; end if;
  raise notice 's=%', s;
  while n < 3 loop n := n + 1; end loop;
  raise notice 'n=%', n;
  create table dt (a int, b text);
  insert into dt select g, 'v' || g from generate_series(1,5) g;
  for r in select a, b from dt where a > 2 order by a loop
    raise notice 'row % %', r.a, r.b;
  end loop;
  select count(*) into n from dt;
  raise notice 'count %', n;
  update dt set b = 'w' where a < 3;
  get diagnostics n = row_count;
  raise notice 'updated % found %', n, found;
  perform 1 from dt where a = 99;
  if not found then raise notice 'not found'; end if;
  <<outer>> for i in 1..3 loop
    for j in 1..3 loop
      continue outer when j = 2;
      raise notice 'i % j %', i, j;
    end loop;
  end loop;
  for i in reverse 10..1 by 4 loop raise notice 'rev %', i; end loop;
  loop n := n + 10; exit when n > 40; end loop;
  raise notice 'n %', n;
  case n when 42, 43 then raise notice 'case hit'; else raise notice 'case miss'; end case;
  execute 'select max(a) from dt where a < $1' into n using 4;
  raise notice 'max %', n;
  raise notice '%% literal, null %', null;
end $$;
select * from dt order by a;

-- case: exceptions
create table et (a int primary key);
do $$
declare n int;
begin
  insert into et values (1);
  begin
    insert into et values (2);
    raise exception 'boom %', 1 using detail = 'some detail', errcode = '22012';
  exception when division_by_zero then
    raise notice 'caught: % %', sqlstate, sqlerrm;
  end;
  begin
    insert into et values (1);
  exception when unique_violation then
    raise notice 'duplicate caught';
  end;
  select count(*) into n from et;
  raise notice 'rows %', n;
end $$;
select * from et;
do $$ begin insert into et values (5); raise exception 'plain %', 42; end $$;
select * from et;
do $$ declare y int; begin y := 1/0; end $$;
do $$ begin perform nosuch(); end $$;
do $$ begin execute 'select * from nosuch'; end $$;
do $$ declare n int; begin select a into strict n from et where a > 100; end $$;
do $$ begin raise exception using message = 'from using', hint = 'a hint'; end $$;
do $$ begin raise warning 'careful'; end $$;
do $$ begin assert 1 = 2, 'not equal'; end $$;

-- case: syntax_errors
do $$ begin if then end if; end $$;
do $$ begin loop end; end $$;
do language plpythonu $$ pass $$;
do $$ begin end $$ language sql;

-- case: foreach
do $$
declare a int[] := array[1,2,3]; x int; s int := 0;
begin
  foreach x in array a loop s := s + x; end loop;
  raise notice 'sum %', s;
  foreach x in array array[[1,2],[3,4]] loop raise notice 'x %', x; end loop;
  foreach x in array '{}'::int[] loop raise notice 'never'; end loop;
end $$;
do $$
declare t text;
begin
  foreach t in array array['a',null,'c'] loop raise notice 't %', t; end loop;
  foreach t in array null::text[] loop raise notice 'never'; end loop;
end $$;

-- case: foreach_slice
do $$ declare x int[]; begin foreach x slice 1 in array '[2:3][5:6]={{1,2},{3,4}}'::int[] loop raise notice '% %', x, array_lower(x,1); end loop; end $$;
do $$ declare x int[]; begin foreach x slice 2 in array '[2:3][5:6]={{1,2},{3,4}}'::int[] loop raise notice '% %', x, array_lower(x,1); end loop; end $$;
do $$ declare x int; begin foreach x slice 1 in array array[1,2] loop raise notice '%', x; end loop; end $$;
do $$ declare x int[]; begin foreach x slice 3 in array array[1,2] loop raise notice '%', x; end loop; end $$;
do $$ declare x int[]; begin foreach x slice 1 in array '{}'::int[] loop raise notice '%', x; end loop; raise notice 'done'; end $$;
do $$ declare x int[]; begin foreach x slice -1 in array array[1] loop raise notice '%', x; end loop; end $$;
do $$ declare x text[]; begin foreach x slice 1 in array array[[1,2],[3,4]] loop raise notice '%', x; end loop; end $$;
do $$ declare x int[]; begin foreach x slice 1 in array array[[1,null],[3,4]] loop raise notice '%', x; end loop; end $$;
do $$ declare r record; begin foreach r slice 1 in array array[[1,2],[3,4]] loop raise notice '%', r; end loop; end $$;
