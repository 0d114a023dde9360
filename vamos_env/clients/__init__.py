"""Clients for the two services, identical against the twins and the real products.

The billing client is the official ``stripe.StripeClient``; the loan client is
our httpx ``FineractClient``. Which server they reach is configuration: a base
URL and credentials (see ``ServiceEndpoints``), or an in-process transport.
"""
