-- PostgreSQL's hash functions (hashint4, hashtext, hash_numeric, hash_array, ... and their
-- seeded ...extended forms), which hash partitioning routes rows with: every value must hash
-- bit for bit as on PostgreSQL 15. Edge values per type, every lookup3 tail length for text,
-- the seeds 0, HASH_PARTITION_SEED (8816678312871386365) and -1, the functions' argument
-- resolution and their errors. Each "-- case:" block runs in its own psql session on keel and
-- on PostgreSQL 15.

-- case: integers
select x, hashint4(x), hashint4extended(x, 0), hashint4extended(x, 8816678312871386365), hashint4extended(x, -1)
from unnest(array[0, 1, -1, 5, 42, 2147483647, -2147483648]) as x;
select x, hashint8(x), hashint8extended(x, 0), hashint8extended(x, 8816678312871386365), hashint8extended(x, -1)
from unnest(array[0, 1, -1, 2147483647, -2147483648, 2147483648, -2147483649, 4294967295, 4294967296, -4294967296, 9223372036854775807, -9223372036854775808]::int8[]) as x;
select x, hashint2(x), hashint2extended(x, 0), hashint2extended(x, 8816678312871386365), hashint2extended(x, -1)
from unnest(array[0, 1, -1, 32767, -32768]::int2[]) as x;
select x, hashoid(x), hashoidextended(x, 0), hashoidextended(x, 8816678312871386365), hashoidextended(x, -1)
from unnest(array[0, 1, 4294967295]::oid[]) as x;
select hashint2(5::int2) = hashint4(5), hashint4(-5) = hashint8(-5), hashint8extended(-7, 3) = hashint4extended(-7, 3), hashint4(5::int2), hashoid(7), hashint8(5);

-- case: floats
select x, hashfloat8(x), hashfloat8extended(x, 0), hashfloat8extended(x, 8816678312871386365), hashfloat8extended(x, -1)
from unnest('{0,-0,1,0.1,-2.5,1e308,5e-324,NaN,Infinity,-Infinity}'::float8[]) as x;
select x, hashfloat4(x), hashfloat4extended(x, 0), hashfloat4extended(x, 8816678312871386365), hashfloat4extended(x, -1)
from unnest('{0,-0,1,-1.5,0.1,3.4e38,1e-45,NaN,Infinity,-Infinity}'::float4[]) as x;
select hashfloat4(0.1::float4) = hashfloat8(0.1::float4::float8), hashfloat8('-0') = hashfloat8('0'), hashfloat8(1), hashfloat4(1.5), hashfloat8('NaN'::float8 * -1) = hashfloat8('NaN');

-- case: numeric
select x, hash_numeric(x), hash_numeric_extended(x, 0), hash_numeric_extended(x, 8816678312871386365), hash_numeric_extended(x, -1)
from unnest('{0,0.0,-0.000,1,1.1,1.10,-1.1,3.5,-3.5,0.5,100,9999,10000,1000000,10000.0001,0.0001,0.00001,1e100,1e-100,123456789.123456789,99999999999999999999999,-12345678901234567890.0987654321,NaN,Infinity,-Infinity}'::numeric[]) as x;
select hash_numeric(1.1) = hash_numeric(1.10), hash_numeric(3.5) = hash_numeric(-3.5), hash_numeric(0) = hash_numeric(0.000), hash_numeric(1) = hash_numeric(10000);
select hash_numeric(5), hash_numeric_extended(1.50, 42), hash_numeric_extended(42, 0), hash_numeric_extended('1e-1000', 7), hash_numeric(power(10::numeric, 200));

-- case: text lengths
select n, hashtext(left('abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH', n)),
  hashtextextended(left('abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH', n), 0),
  hashtextextended(left('abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH', n), 8816678312871386365),
  hashtextextended(left('abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH', n), -1)
from generate_series(0, 40) as n;

-- case: text values
select x, hashtext(x), hashtextextended(x, 0), hashtextextended(x, 8816678312871386365), hashtextextended(x, -1)
from unnest(array['', 'é', 'naïve café', '日本語テキスト', '😀', 'Ünïcödé strings longer than twelve bytes', 'tab	here', repeat('x', 1000)]) as x;
select hashtext('abc'), hashtextextended('abc', 4294967296), hashtextextended('abc', 4294967295), hashtextextended('abc', 1);
select hashtext('abc'::varchar), hashtextextended('abc'::varchar(10), 5), hashtext('ab  '::char(4)) = hashtext('ab'), hashtext('pg_catalog'::name);
select hashname('abc'), hashname(''), hashnameextended('pg_catalog', 0), hashnameextended('abc'::text, 8816678312871386365), hashname(repeat('y', 70)) = hashname(repeat('y', 63));

-- case: bpchar
select x, hashbpchar(x), hashbpcharextended(x, 0), hashbpcharextended(x, 8816678312871386365), hashbpcharextended(x, -1)
from unnest(array['ab', 'ab  ', '', '   ', ' a ', 'é  ', 'abcdefghijklm   ']::bpchar[]) as x;
select hashbpchar('ab'::char(5)), hashbpchar(''::char(3)), hashbpchar('ab  '::text), hashbpchar('ab') = hashtext('ab'), hashbpcharextended('x'::char(8), 3) = hashtextextended('x', 3);
create table hf_bp (id int, c char(6), v varchar(6));
insert into hf_bp values (1, 'ab', 'ab'), (2, 'ab    ', 'ab  '), (3, '', ''), (4, ' z', ' z ');
select id, hashbpchar(c), hashbpcharextended(c, 8816678312871386365), hashtext(v), hashtext(c) from hf_bp order by id;

-- case: datetime
select x, timestamp_hash(x), timestamp_hash_extended(x, 0), timestamp_hash_extended(x, 8816678312871386365), timestamp_hash_extended(x, -1)
from unnest('{"2000-01-01 00:00:00","1999-12-31 23:59:59.999999","2024-06-01 12:34:56.789","1970-01-01 00:00:00",infinity,-infinity}'::timestamp[]) as x;
select timestamp_hash('2000-01-01'::date), timestamp_hash_extended('2024-02-29'::date, 0), timestamp_hash('2000-01-01') = hashint8(0);
select x, interval_hash(x), interval_hash_extended(x, 0), interval_hash_extended(x, 8816678312871386365), interval_hash_extended(x, -1)
from unnest('{0,"1 day","24 hours","1 mon","30 days","-1 year","1 year 2 mons 3 days 04:05:06.789","178000000 years","-178000000 years","2147483647 days","1 mon -30 days"}'::interval[]) as x;
select interval_hash('1 day') = interval_hash('24 hours'), interval_hash('1 mon') = interval_hash('30 days'), interval_hash('1 mon -30 days') = interval_hash('0');

-- case: oidvector
select hashoidvector(''), hashoidvector('1 2'), hashoidvector('4294967295 0'), hashoidvectorextended('1 2', 0), hashoidvectorextended('1 2', 8816678312871386365), hashoidvectorextended('', -1);
select hashoidvector('1 2') = hash_array('1 2'::oidvector), hash_array('1 2'::oidvector), hash_array('1 2'::int2vector), hash_array_extended('1 2'::int2vector, 9);

-- case: arrays
select x, hash_array(x), hash_array_extended(x, 0), hash_array_extended(x, 8816678312871386365), hash_array_extended(x, -1)
from (values ('{}'::int4[]), ('{1}'), ('{1,2,3}'), ('{1,NULL,3}'), ('{NULL}'), ('{{1,2},{3,4}}'), ('{1,2,3,4}'), ('[0:2]={1,2,3}')) as v(x);
select hash_array('{a,b,""}'::text[]), hash_array_extended('{1.1,1.10,NaN,0}'::numeric[], 5), hash_array('{NaN,-0,1.5}'::float8[]), hash_array_extended('{NaN,-0,1.5}'::float4[], 0);
select hash_array('{t,f,NULL}'::bool[]), hash_array_extended('{2000-01-01,infinity}'::date[], 8816678312871386365), hash_array('{"1 day","24 hours"}'::interval[]);
select hash_array(array['\x00ff'::bytea, null]), hash_array_extended(array['\x'::bytea, '\x000102030405060708090a0b0c0d'], -1), hash_array('{ab,"ab  "}'::bpchar[]);
select hash_array('{"2024-06-01 12:34:56.789+00"}'::timestamptz[]), hash_array_extended('{1,2}'::int8[], 1), hash_array('{1,2}'::int2[]) = hash_array('{1,2}'::int8[]);
select hash_array(array[[1,2],[3,4]]) = hash_array(array[1,2,3,4]), hash_array('{}'::text[]), hash_array_extended('{}'::int[], 77);
select hash_array(array[row(1, 'a'::text), null]);
select hash_array_extended(array[row(1, 'a'::text)], 0);

-- case: records
select hash_record(row(1, 'a'::text)), hash_record_extended(row(1, 'a'::text), 0), hash_record_extended(row(1, 'a'::text), 8816678312871386365), hash_record_extended(row(1, 'a'::text), -1);
select hash_record(row(null::int4, 2)), hash_record_extended(row(1::int8, 1.5::numeric, true), 0), hash_record(row(array[1,2], null::text)), hash_record(row()), hash_record_extended(row(), 5);
select hash_record(row('\x00ff'::bytea)), hash_record(row('2000-01-01'::date)), hash_record_extended(row(true), 1), hash_record(row('2024-06-01 12:34:56.789+00'::timestamptz));
create type hf_pair as (x int, y text);
select hash_record(row(1, 'a')::hf_pair) = hash_record(row(1, 'a'::text)), hash_record_extended(row(row(1, 'a')::hf_pair, 'x'::text), 0);
select hash_array(array[row(1, 'a')::hf_pair, null]), hash_array_extended(array[row(1, 'a')::hf_pair, null], 0);
select hash_record(row(row(1, 2), 'x'::text));
select hash_record(row(array[row(1, 2)]));

-- case: table values
create table hf_t (id int, k int4, b int8, t text, n numeric, d date, ts timestamp);
insert into hf_t values (1, 0, 0, '', 0, '2000-01-01', '2000-01-01'), (2, -1, -1, 'abc', 1.10, '1970-01-01', 'infinity'),
  (3, 2147483647, 9223372036854775807, 'naïve café', -3.5, 'infinity', '2024-06-01 12:34:56.789'), (4, null, null, null, null, null, null);
select id, hashint4extended(k, 8816678312871386365), hashint8extended(b, 8816678312871386365), hashtextextended(t, 8816678312871386365),
  hash_numeric_extended(n, 8816678312871386365), timestamp_hash_extended(ts, 8816678312871386365) from hf_t order by id;
-- The partition of a one-column key: hash_combine64(0, h) is h + 0x49a0f4dd15e5a8e3 (mod 2^64).
select id, ((hashint4extended(k, 8816678312871386365)::numeric + 5305509591434766563 + 18446744073709551616) % 18446744073709551616) % 8 as part8,
  ((hashtextextended(t, 8816678312871386365)::numeric + 5305509591434766563 + 18446744073709551616) % 18446744073709551616) % 13 as text_part13
from hf_t order by id;

-- case: nulls and resolution
select hashint4(null), hashtextextended(null, 0), hashint4extended(1, null), hash_array(null::int[]), hash_numeric(null) is null;
select hashint4('7'), hashint8(7), hashint4extended(7::int2, 3::int2), hashtext('x'::char(3)), hashfloat8(2), hashfloat4(2), hash_numeric(2);
select pg_typeof(hashint4(1)), pg_typeof(hashint4extended(1, 0)), pg_typeof(hash_array_extended(array[1], 0)), pg_typeof(hash_record(row(1)));
select hashint2(5);
select hashint4(5::int8);
select timestamp_hash('2000-01-01'::timestamptz);
select hashint4extended(5, 1.5);
select hashtext(1);
select hashvarlena('\x01'::bytea);
select hashchar(true);
