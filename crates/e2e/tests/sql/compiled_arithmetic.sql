-- case: compiled_arithmetic_values_nulls_and_errors
select 1+2*3 as a, (2.5::float8)::int + 1 as b, (3.5::float8)::int*2 as c, (-2.5::float8)::int - 0 as d;
select x, x*2+1, x::float8/3*3, (x*1.5)::int2 + 1, x%3+x, -x*2, abs(x)*2 from generate_series(-3,3) x;
select x*x*x from generate_series(2147483640, 2147483647) x;
select (x*1e300)*1e300 from (values (1.0::float8), (0.0::float8), (null)) v(x);
select (x::float8*1e-300)*1e-300 from (values (1), (0)) v(x);
select 32767::int2 + 1::int2 * 1::int2;
select x from generate_series(1,10) x where x*2+1 > 7 and x%2*1 = 0;
select count(*) filter (where x*2 > 5 + 1) from generate_series(1,10) x;
select (null::int + 1) * 2, 1/(0*1) from (values (1)) v;
select 2147483647::int8 * 2 + 1, (2147483647 * 2)::int8;
select 'NaN'::float8 * 2 = 'NaN'::float8 + 1, 'NaN'::float8 * 1 > 1e308 * 1;
select x, (x + 0.5)::int4 * 1, (x - 0.5)::int8 * 1 from (values (1.5::float8), ('-2.5'), ('2147483646.4')) v(x);
select x, (x + 0.5)::int4 * 1 from (values ('2147483647.5'::float8)) v(x);
select y*2+1 from (values (1::int2), (16383::int2)) v(y);
select y*2+1 from (values (16384::int2)) v(y);
select (-32768)::int2 % (-1)::int2 + 0::int2, (-2147483648) % -1 + 0, (-9223372036854775808)::int8 % -1 + 0;
select (-2147483648) / -1 + 0;
select 1.0::float8 / (0 * 1);
select null::int / 0 + 1, 1 / 0 + null::int;
create table compiled_t (a int, b int8, c float8, d int2);
insert into compiled_t values (1, 2, 3.5, 4), (null, 5, 1, 6), (4, null, null, null), (7, 8, 'Infinity', 9);
select a*2+b, (c*2)::int8 + a, a+b*c, d*d+a from compiled_t where c <> 'Infinity' or c is null order by 1, 2;
select a+b*c, c*2 - c from compiled_t order by 1, 2;
select (c*2)::int + a from compiled_t;
select a, b from compiled_t where a*2+b > 5 order by a;
update compiled_t set b = a*10+b where a*1 is not null returning a, b, b*2+1;
select a from compiled_t where a + 1 = '2'::int * 1;
select sum(a*2+1), max(c*2), min(b-a*2) from compiled_t;
drop table compiled_t;
-- case: compiled_arithmetic_in_sql_and_plpgsql_functions
create function compiled_f(n int) returns int language sql as $$ select n*n+n*2+1 $$;
create table compiled_n (x int);
insert into compiled_n values (3), (null), (46339);
select x, compiled_f(x) from compiled_n order by x;
insert into compiled_n values (46341);
select compiled_f(x) from compiled_n;
drop table compiled_n;
create function compiled_g(n int) returns float8 language plpgsql as $$
declare s float8 := 0;
begin
  for i in 1..n loop
    s := s + i*0.5*2;
  end loop;
  return s*1;
end $$;
select compiled_g(100), compiled_g(0);
drop function compiled_f(int);
drop function compiled_g(int);
