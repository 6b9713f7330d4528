-- format(), quote_ident/quote_literal/quote_nullable, translate() and the POSIX regular
-- expression operators and functions (PostgreSQL's ARE flavour), with their NULL handling and
-- errors. Each "-- case:" block runs in its own psql session on keel and on PostgreSQL 15.

-- case: format_basic
select format('%s-%I-%L', 1, 'Foo', 'it''s');
select format('Hello %s, %s', 'World', 42), format('x'), format('%%%s%%', 'a');
select format('%s|%s|%L|%L', 1.50, true, 42, null::int);
select format('[%5s][%-5s][%5L][%-5I]', null, null, null, 'x');
select format('%3$s, %2$s, %s', 'one', 'two', 'three');
select format('[%*s][%*s][%-*s]', -3, 'a', null, 'b', 3, 'c');
select format('%1$*s|', 3, 4), format('%*s', '3', 'x'), format('[%3s]', 'é');
select format(null) is null, format(null, 1) is null, format('%s %s', 'a', null);
select format('%I %I %I %I', 'select', 'a b', 'name', 'MixedCase');

-- case: format_errors
select format('%s %q', 1);
select format('%s %s', 1);
select format('%I', null);
select format('%0$s', 1);
select format('%*1s', 3);
select format('%', 1);
select format('%1', 'a');
select format('%99999999999s', 'a');
select format('%*s', 'c', 'x');
select format('abc%é', 1);

-- case: quote_functions
select quote_ident('select'), quote_ident('abc'), quote_ident('Abc'), quote_ident('a"b');
select quote_ident('_x1'), quote_ident('1x'), quote_ident(''), quote_ident('between'), quote_ident('é');
select quote_ident('user'), quote_ident('int'), quote_ident('authorization'), quote_ident('abort');
select quote_literal('it''s'), quote_literal(E'a\\b'), quote_literal(42), quote_literal(1.5::numeric);
select quote_literal(null) is null, quote_nullable(null), quote_nullable(1.5), quote_nullable('a');
create table qt (id int, name text);
insert into qt values (1, 'plain'), (2, 'Has Space'), (3, null), (4, 'o''brien');
select id, quote_ident(name), quote_literal(name), quote_nullable(name), format('%L', name) from qt order by id;

-- case: translate_function
select translate('12345', '143', 'ax'), translate('aéb', 'é', 'E'), translate('hello', 'lo', 'LOX');
select translate('abc', null, 'x') is null, translate('abcabc', 'abc', '');

-- case: regex_operators
select 'abc' ~ 'b', 'ABC' ~* 'b', 'x' !~ 'y', 'X' !~* 'x';
select 'abc' ~ '^b', 'abc' ~ 'c$', 'É' ~* 'é', 'é' ~ '\w', '日本語' ~ '^.{3}$';
select null::text ~ 'a', 'a' ~ null;
create table rx (id int, s text);
insert into rx values (1, 'apple'), (2, 'Banana'), (3, 'cherry pie'), (4, null), (5, 'APPLE tart');
select id from rx where s ~ '^a' order by id;
select id from rx where s ~* '^a' order by id;
select id from rx where s !~ 'a' order by id;
select id, s ~ '\mpie\M', s ~* 'an{2}' from rx order by id;

-- case: regex_invalid_patterns
select 'a' ~ '(';
select 'a' ~ 'a{300}';
select 'a' ~ '[z-a]';
select 'a' ~ 'a**';
select 'a' ~ '\';
select 'a' ~ '[[:foo:]]';
select 'a' ~ '[a';
select 'a' ~ '\9';
select 'a' ~ '(?z)a';
select 'a' ~ 'a{1';

-- case: regexp_replace_basic
select regexp_replace('aaa', 'a', 'b'), regexp_replace('aaa', 'a', 'b', 'g');
select regexp_replace('abcd', 'a|ab', 'X'), regexp_replace('axbyb', 'a.*?b.*', 'X');
select regexp_replace('Hello World', 'o', '0', 'gi'), regexp_replace('ABC', 'b', 'x', 'i');
select regexp_replace('abc', 'x*', '-', 'g'), regexp_replace('abc', '', '-', 'g');
select regexp_replace('foobarbaz', 'b(..)', 'X\1Y', 'g'), regexp_replace('abc', '(b)', '[\1\&\\\x]');
select regexp_replace('héllo wörld', 'ö|é', '_', 'g'), regexp_replace('a.b.c', '.', '-', 'gq');
select regexp_replace('the cat sat', '\mcat\M', 'dog'), regexp_replace('concat cat', '[[:<:]]cat[[:>:]]', 'dog', 'g');
select regexp_replace('a1b22c333', '\d+', '#', 'g'), regexp_replace('  a  b  ', '\s+', ' ', 'g');
select regexp_replace(E'line1\nline2', '^l', 'L', 'g'), regexp_replace(E'line1\nline2', '^l', 'L', 'gn');
select regexp_replace(E'a\nb', 'a.b', 'X'), regexp_replace(E'a\nb', 'a.b', 'X', 'p');
select regexp_replace('xyz', '(x)(y)?(q)?', '[\1|\2|\3]'), regexp_replace('abcabc', '(a|ab)(c|bcd)', '[\1,\2]', 'g');
select regexp_replace(null, 'a', 'b') is null, regexp_replace('a', null, 'b') is null;

-- case: regexp_replace_start_n
select regexp_replace('abcabc', 'b', 'X', 1, 2), regexp_replace('abcabc', 'b', 'X', 3);
select regexp_replace('abcabcabc', 'b', 'X', 1, 2, 'g'), regexp_replace('abcabcabc', 'b', 'X', 2, 0);
select regexp_replace('abc', 'b', 'X', 0);
select regexp_replace('abc', 'b', 'X', 1, -1);
select regexp_replace('abc', 'b', 'X', 'z');

-- case: regexp_pg15_functions
select regexp_like('abc', 'B', 'i'), regexp_like('abc', 'B'), regexp_count('abcabc', 'b'), regexp_count('abcabc', 'b', 3);
select regexp_count('aaa', 'a*'), regexp_count('abc', '');
select regexp_instr('abcabc', 'b', 1, 2), regexp_instr('abcabc', '(b)(c)', 1, 1, 1, '', 2), regexp_instr('héllo', 'l+', 1, 1, 1);
select regexp_substr('abcabc', 'b.', 1, 2), regexp_substr('abc', '(a)(x)?', 1, 1, '', 2) is null, regexp_substr('héllo wörld', 'w.r');
select regexp_like('a', 'a', 'g');
select regexp_count('a', 'a', 0);
select regexp_instr('a', 'a', 1, 1, 2);
select regexp_substr('a', 'a', 1, 0);

-- case: regexp_on_table
create table rr (id int, s text);
insert into rr select g, 'item-' || g || '-' || repeat('x', g % 4) from generate_series(1, 40) g;
select count(*) from rr where s ~ '-x{2}$';
select id, regexp_replace(s, '-(\d+)-', '[\1]') from rr where id % 9 = 0 order by id;
select sum(regexp_count(s, 'x')), count(*) filter (where regexp_like(s, '^ITEM-1', 'i')) from rr;
