// placeholder until the sched sources land
