// placeholder until the comm sources land
