-- d) The top 5 customers by number of orders over a week (aggregate + ORDER BY + LIMIT).
\set day random(0, 358)
select c.id, c.name, count(*) as orders
from orders o
join customers c on c.id = o.customer_id
where o.created_at >= timestamp '2024-01-01' + cast(:day as int) * interval '1 day'
  and o.created_at < timestamp '2024-01-01' + (cast(:day as int) + 7) * interval '1 day'
group by c.id, c.name
order by orders desc, c.id
limit 5;
