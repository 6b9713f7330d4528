-- Arrays: text input and output (quoting, NULLs, lower bounds, several dimensions, the
-- malformed-literal errors), constructors, subscripts and slices, operators, ANY/ALL over an
-- array, the array functions, array columns with ordering, GROUP BY, DISTINCT and a B-tree
-- index. Each "-- case:" block runs in its own psql session on keel and on PostgreSQL 15.

-- case: literals
select '{1,2,NULL}'::int[], array[1,2], array['a','b c'], '[2:3]={a,b}'::text[], '{{1,2},{3,4}}'::int[];
select '{"a",b c , " d",NULL,"NULL",""}'::text[], '{ 1 , 2 }'::int[], '{a\\b}'::text[], '{}'::int[];
select '{1.50,2}'::numeric[], '{t,f}'::bool[], '{2024-01-02}'::date[], '{"x\"y",{}}'::text[];
select array[1.5, 2], array[1, 2.5], array[[1,2],[3,4]], array[array[1],array[2]], array[]::int[];
select '{1,2'::int[];
select '1,2'::int[];
select '{1,{2}}'::int[];
select '{{1},{2,3}}'::int[];
select '{1,2}x'::int[];
select '[0:1]={1,2,3}'::int[];
select '[0:1={1,2}'::int[];
select '{{{{{{{1}}}}}}}'::int[];
select '{1,a}'::int[];

-- case: subscripts
select (array[1,2,3])[2], (array[1,2,3])[2:3], (array[1,2,3])[:2], (array[1,2,3])[2:], ('{{1,2},{3,4}}'::int[])[2][1];
select (array[1,2,3])[0], (array[1,2,3])[4], (array[1,2,3])[null], ('{{1,2},{3,4}}'::int[])[1];
select ('{{1,2,3},{4,5,6}}'::int[])[1:2][2:3], ('{{1,2,3},{4,5,6}}'::int[])[2][2:3], ('[0:2]={a,b,c}'::text[])[0];
select (array['a','b','c'])[2.5], (array['a','b','c'])[1.4::float8];
select (array[1,2])['x'];

-- case: operators
select array[1,2] = '{1,2}', '{1,NULL}'::int[] = '{1,NULL}', '{1,2}'::int[] < '{1,2,3}', '[0:1]={1,2}'::int[] = '{1,2}';
select array[1,2] <> array[1,3], array[2] > array[1,9], array[1,2] @> array[2], array[1] <@ array[1,2], array[1,2] && array[2,5];
select array[1,2,NULL] @> array[NULL::int], array[1,2] @> '{}', array['a'] && array['b'];
select array[1,2] || 3, 0 || array[1], array[1] || array[2,3], array[[1,2]] || array[3,4], array[1,2] || array[[3,4]];
select array[1] || '{2,3}', '{1}' || array[2], array[1]::int8[] || 2::int8, null::int[] || 1;
select array[[1,2]] || array[[3]];
select 1 = any(array[1,2]), 3 = any('{1,NULL}'), 1 = all(array[]::int[]), 2 > all(array[0,1]), 'b' = any(array['a','b']);
select null::int = any(array[1]), 1 = any(null::int[]), 5 <> all(array[1,NULL]);
select 1 = any(1);

-- case: functions
select array_length(array[1,2,3],1), array_length(array[1],2), array_length('{}'::int[],1), cardinality('{{1,2},{3,4}}'::int[]), cardinality('{}'::int[]);
select array_lower('[0:1]={1,2}'::int[],1), array_upper('[0:1]={1,2}'::int[],1), array_ndims('{{1},{2}}'::int[]), array_dims('[0:1]={1,2}'::int[]), array_dims('{}'::int[]);
select array_append(array[1,2],3), array_prepend(0,array[1]), array_cat(array[1],array[2,3]), array_append(null::int[], null), array_cat('{}'::int[], null);
select array_position(array['a','b'],'b'), array_position(array[1,NULL,3], NULL), array_position(array[1,2,1],1,2), array_positions(array[1,2,1],1), array_positions(array[1],5);
select array_remove(array[1,NULL,2,NULL],NULL), array_remove(array[1,2,1],1), array_replace(array[1,2,1],1,9);
select array_to_string(array[1,NULL,3],',','*'), array_to_string(array[1,NULL,3],','), array_to_string(array['a','b'],'');
select string_to_array('a,b,,c', ','), string_to_array('abc', NULL), string_to_array('a,b,*', ',', '*'), string_to_array('', ','), string_to_array('abc', '');
select array(select generate_series(1,3)), array(select 'x' where false), array(select g from generate_series(1,5) g order by g desc);

-- case: columns
create table ta (id int primary key, tags text[], nums int4[], vals float8[]);
insert into ta values (1, '{a,b}', '{1,2}', '{1.5}'), (2, array['c'], array[3,NULL], null), (3, '{}', '{1,2}', '{-0.5,2e10}');
insert into ta values (4, array['a'], '{{1,2},{3,4}}', '{}');
select * from ta order by id;
select * from ta where 'a' = any(tags) order by id;
select * from ta where tags @> '{a}' order by id;
select * from ta order by nums desc, id;
select nums, count(*) from ta group by nums order by nums;
select distinct nums from ta order by nums;
select id, tags[1], nums[2], array_length(nums, 1) from ta order by id;
update ta set tags = tags || 'z' where id = 1;

select * from ta where id = 1;
create index ta_nums on ta (nums);

select id from ta where nums = '{1,2}' order by id;
select id from ta where nums > '{1,2}' order by id;

select * from ta where id = any('{1,3}') order by id;

-- case: array_agg
create table aa(g int, v int, s text);
insert into aa values (1,3,'c'),(1,1,'a'),(2,2,null),(2,5,'e'),(3,null,null);
select g, array_agg(v), array_agg(s) from aa group by g order by g;
select array_agg(v order by v desc), array_agg(distinct g) from aa;
select array_agg(v) filter (where v > 1) from aa;
select array_agg(v) from aa where false;
select array_agg(array[g,v]) from aa where v is not null;
select pg_typeof(array_agg(s)), pg_typeof(array_agg(1.5)) from aa;
drop table aa;
-- case: regexp_match
select regexp_match('foobarbequebaz', '(bar)(beque)');
select regexp_match('foobarbequebaz', 'barbeque');
select regexp_match('abc', 'x');
select regexp_match('ABC', 'b', 'i');
select regexp_match('a1b22', '(\d)(x)?');
select regexp_split_to_array('hello world  foo', '\s+');
select regexp_split_to_array('abc', '');
select regexp_split_to_array('a,B,c', 'b', 'i');
select (regexp_match('key=val', '(\w+)=(\w+)'))[2];

-- case: subscripted_update
create table arr_set (id int primary key, a int[], t text[]);
insert into arr_set values (1, '{1,2,3}', '{x,y}'), (2, null, null), (3, '{}', '{}'), (4, '{{1,2},{3,4}}', null), (5, '[0:1]={7,8}', null);
update arr_set set a[2] = 20 where id = 1;
update arr_set set a[5] = 50 where id = 1;
update arr_set set a[-1] = 0 where id = 1;
update arr_set set a[3] = 30, t[2] = 'b' where id = 2;
update arr_set set a[1] = 10, t[1] = 'first' where id = 3;
update arr_set set a[2][1] = 33 where id = 4;
update arr_set set a[1] = null where id = 5;
update arr_set set a[1] = 1, a[2] = 2 where id = 5;
select id, a, t from arr_set order by id;
update arr_set set a[3][1] = 33 where id = 4;
update arr_set set a[1] = 33 where id = 4;
update arr_set set a[null] = 1 where id = 5;
update arr_set set a[1] = true where id = 1;
update arr_set set a[1] = 'x' where id = 1;
update arr_set set a[1] = 1, a = '{5}' where id = 1;
update arr_set set a = '{5}', a = '{6}' where id = 1;
update arr_set set id[1] = 1 where id = 1;
update arr_set set a[2:3] = '{8,9}' where id = 1;
update arr_set set a[2:3] = '{8}' where id = 1;
update arr_set set a[:2] = '{5,6,7}' where id = 1;
update arr_set set a[9:10] = '{1,2}' where id = 1;
update arr_set set a[1:2] = '{1,2}' where id = 2;
update arr_set set a[1:1][1:2] = '{{9,9}}' where id = 4;
update arr_set set a[1:2] = 5 where id = 1;
update arr_set set a[:2] = '{1,2}' where id = 3;
update arr_set set a[1:2] = null where id = 5;
update arr_set set a['2'] = 7, a[1.6] = 70 where id = 1;
update arr_set set a[1] = a[2] + 100, id = 11 where id = 1 returning *;
select id, a, t from arr_set order by id;
drop table arr_set;

-- case: qualified_column_subscripts
create table arr_q (id int, a int[], b text[][]);
insert into arr_q values (1, '{10,20,30}', '{{x,y},{z,w}}'), (2, '{}', null);
select arr_q.a[2], arr_q.b[2][1], q.a[1:2] from arr_q, arr_q q where q.id = arr_q.id order by 1;
select arr_q.a from arr_q order by arr_q.id;
select arr_q.nosuch[1] from arr_q;
drop table arr_q;

-- case: insert_into_subscripted_columns
create table arr_ins (a int2[], b int4[][][], c text[], e float8[], n int);
insert into arr_ins (a[1:5], b[1:1][1:2][1:2], c, n)
   values ('{1,2,3,4,5}', '{{{0,0},{1,2}}}', '{}', 1);
insert into arr_ins (a, b[1:2][1:2], c[2], n) values ('{11,12,23}', '{{3,4},{4,5}}', 'two', 2);
insert into arr_ins (e[0], e[1], n) values (1.5, 2.5, 3);
insert into arr_ins (c[2:3], n) select array['x', 'y'], 4;
insert into arr_ins (b[2]) values (now());
insert into arr_ins (b[1:2]) values (now());
insert into arr_ins (a, a[1]) values ('{1}', 2);
insert into arr_ins (a[1], a) values (2, '{1}');
insert into arr_ins (n, n) values (1, 2);
select n, a, b, c, e from arr_ins order by n;
drop table arr_ins;

-- case: string_to_table_array_fill_trim_array
select * from string_to_table('1|2|3', '|');
select string_to_table('1|2||3', '|', '2') as v;
select * from string_to_table('abc', null);
select * from string_to_table('abc', '');
select * from string_to_table(null, ',');
select * from string_to_table('', ',');
select array_fill(null::integer, array[3,3], array[2,2]);
select array_fill(7, array[3,3]);
select array_fill('juhu'::text, array[2], array[0]);
select a, a = '{}' as is_eq, array_dims(a) from (select array_fill(42, array[0]) as a) ss;
select a, a = '{}' as is_eq, array_dims(a) from (select array_fill(42, '{}', '{}') as a) ss;
select array_fill(1, null, array[2,2]);
select array_fill(1, array[2,2], '{}');
select array_fill(1, array[1,2,null]);
select array_fill(1, array[[1,2],[3,4]]);
select arr, trim_array(arr, 2) from (values ('{1,2,3,4,5,6}'::bigint[]), ('{1,2}'), ('[10:16]={1,2,3,4,5,6,7}'), ('{{1,10},{2,20},{3,30},{4,40}}')) v(arr);
select trim_array(array[1, 2, 3], -1);
select trim_array(array[1, 2, 3], 10);
select trim_array(array[]::int[], 1);

-- case: like_any_all_arrays
select 'foo' like any (array['%a', '%o']), 'foo' like any (array['%a', '%b']);
select 'foo' like all (array['f%', '%o']), 'foo' like all (array['f%', '%b']);
select 'foo' not like any (array['%a', '%b']), 'foo' not like all (array['%a', '%o']);
select 'foo' ilike any (array['%A', '%O']), 'foo' ilike all (array['F%', '%O']);
select 'foo' like any (array['f%', null]), 'foo' like all (array['x%', null]), 'foo' like some (array['%o']);
select 'foo' like any (null::text[]);
select 1 like any (array[1]);

-- case: width_bucket_and_array_min_max
SELECT width_bucket(5, ARRAY[3, 4, NULL]);
SELECT width_bucket(5, ARRAY[ARRAY[1, 2], ARRAY[3, 4]]);
select width_bucket(5, '{}'), width_bucket(5, array[3.5, 6]), width_bucket(10, array[1,3,9,'NaN'::float8]);
select width_bucket(5.0, null::numeric[]), width_bucket(null, array[1]);
SELECT width_bucket('5'::text, ARRAY[3, 4]::integer[]);
select op, width_bucket(op, ARRAY[1, 3, 5, 10]) AS wb_1 from generate_series(-2, 11) op;
create table at (a int[], b text[]);
insert into at values ('{1,2}', '{b}'), ('{1,3}', '{a,z}'), (null, null), ('{}', '{}');
select max(a), min(a), max(b), min(b) from at;

-- case: untyped_array_of_polymorphic_pair
select array_positions(NULL, 10), array_position(NULL, 10);
select array_positions('{1,10,10}', 10), array_remove('{1,2,2}', 2), array_replace('{1,2}', 2, 9);
select array_remove('{{1,2,2},{1,4,3}}', 2);

-- case: int2vector_and_oidvector
select '11 22 33'::int2vector, ' 1   2 '::oidvector, ''::int2vector, array_dims(''::int2vector);
select ('1 2 3'::int2vector)[1], ('1 2 3'::int2vector)[0:1], array_dims('1 2'::int2vector);
select '1 2'::int2vector = '1 2'::int2vector, '1 2'::int2vector || 3::int2, '1 2'::int2vector::int2[];
select array[1,2]::int2vector, array_dims(array[1,2]::int2vector), array[3,4]::oidvector;
select array[]::int2vector;
select array[1,null]::int2vector;
select '{1,2}'::int2[]::int2vector;
select 1::int4::int2[];
select '1,2'::int2vector;
select '99999'::int2vector;
select pg_typeof(array(select '11 22 33'::int2vector from generate_series(1,2))), array(select '11 22 33'::oidvector from generate_series(1,2));
select pg_typeof(unnest(array['11 22 33'::int2vector])), unnest(array['11 22 33'::int2vector]);
select pg_typeof(unnest('11 22 33'::oidvector)), unnest('11 22 33'::oidvector);
select array_length('1 2'::int2vector, 1), cardinality('1 2'::int2vector), array_to_string('1 2'::int2vector, ','), array_append('1 2'::int2vector, 3::int2);
create table vec_col (a int2vector, b oidvector);
insert into vec_col values ('1 2', '3 4'), ('', '5');
select a, b, a[0], b[1] from vec_col order by b[0];
