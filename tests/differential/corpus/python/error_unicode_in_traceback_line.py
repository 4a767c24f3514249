données = {"clé": 1}
print(données["clé_manquante"])
