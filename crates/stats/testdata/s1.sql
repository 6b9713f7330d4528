drop table if exists s1;
create table s1 (a int, b int, c text, d numeric, e float8, f bool, g int, h int);
insert into s1 select g, g % 10, case when g % 7 = 0 then null else 'v' || (g % 37) end, (g % 100) / 4.0, (g*37 % 1000)::float8 / 3, g % 3 = 0,
  case when g <= 2000 then 1 when g <= 2600 then 2 when g <= 2700 then 3 else g end,
  (g * 7919) % 3000
from generate_series(1, 5000) g;
analyze s1;
