print("gaugectl")
