"""What each GPU vendor's hardware and libraries mean to the analysis: kernel-name taxonomy, generations and what they accelerate."""
