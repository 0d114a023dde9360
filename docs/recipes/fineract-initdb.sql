-- Fineract expects its tenant registry and the default tenant's schema to exist.
CREATE DATABASE IF NOT EXISTS fineract_tenants;
CREATE DATABASE IF NOT EXISTS fineract_default;
