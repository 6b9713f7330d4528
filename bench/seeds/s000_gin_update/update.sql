\set id random(1,{{rows}})
update test set crt_time=now() where id=:id;
