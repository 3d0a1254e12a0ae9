"""What every stage shares: storage (local, s3://, gs://, https), table registry, languages, URLs, sites, lexicons, progress, reports, redaction, the Java UDFs' jar."""
