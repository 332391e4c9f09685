"""Hand-written runtime code that ``python -m codegen`` copies into the generated package."""
