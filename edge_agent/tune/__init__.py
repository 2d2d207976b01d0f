"""Synthetic households and the questions asked about them, as training data for a LoRA adapter."""
