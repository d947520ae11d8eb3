#!/usr/bin/env bash








# 10









# 20









# 30









# 40









# 50









# 60









# 70









# 80









# 90









# 100









# 110









# 120









# 130









# 140









# 150





  controllers: "-endpoints-controller,-endpointslice-mirroring-controller,*"



# 160









# 170









# 180









# 190









# 200
