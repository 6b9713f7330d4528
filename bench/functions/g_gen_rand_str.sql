select gen_rand_str(512);
