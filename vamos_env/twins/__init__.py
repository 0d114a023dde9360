"""Service twins: in-memory, vendor-faithful stand-ins for Stripe and Apache Fineract."""
