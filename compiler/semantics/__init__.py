"""What a policy means: the reference interpreter and access sets over the compiled tables."""
