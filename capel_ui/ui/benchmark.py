"""The Benchmark page (being built)."""

import streamlit as st


def render() -> None:
    st.title("Benchmark")
