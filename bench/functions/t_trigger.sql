insert into fb_events (payload) values ('x');
