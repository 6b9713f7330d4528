-- b) A customer's last 10 orders (index on orders (customer_id, created_at), read backwards).
\set customer_id random(1, :customers)
select id, created_at, status, total
from orders
where customer_id = :customer_id
order by created_at desc
limit 10;
