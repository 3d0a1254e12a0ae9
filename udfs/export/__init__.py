"""Export: sentence splitting and alignment, bitext filters and formats, crawl plans (export-bitext, export-crawl-plan)."""
