# A hand-written profile whose headroom is larger than small capacities (hostile cases).
name = roomy
headroom = 256MiB
