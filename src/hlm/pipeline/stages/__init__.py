"""The work of each pipeline stage, called by the thin scripts in workflow/scripts.

Each function reads its inputs, computes through the library and writes its
outputs atomically; estimators never touch files or MLflow, these do. One
module per group of rules, so that editing one stage reruns only its jobs.
"""
