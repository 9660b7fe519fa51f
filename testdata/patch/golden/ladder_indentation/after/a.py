class A:
    def run(self):
        if self.ok:
            return 2
        log("fallback")
        return 0
