\set id random(1,{{rows}})
select * from test where id=:id;
