class A:
    def run(self):
        if self.ok:
            return 1
        return 0
