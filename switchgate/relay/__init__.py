"""The only layer that combines dialects, providers, routing and billing, and that talks
to upstreams over the network."""
