"""lock"""
